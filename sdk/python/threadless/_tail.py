"""The local tail: what decorate falls back to when the service cannot answer.

Per memory and thread (a fallback in one conversation never shows another's messages), in this
process's memory only (a restarted process has no tail), for the ``max_tails`` most recently used
threads. Refreshed from every successful decorate; a
successful report appends its messages. Window cuts use ``threadless.window``, the same code the
server uses. Never does I/O. Thread-safe (one lock; every critical section is short).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .window import fit_window

__all__ = ["DEFAULT_THREAD", "Tail", "TailStore", "join_instructions", "split_system", "tail_key"]

# Tails whose last decorate was degraded (their reports are skipped); bounded like the tails.
_DEGRADED_FACTOR = 4

DEFAULT_THREAD = "default"  # the server's name for a memory's own thread (no thread given)
# Between a memory's key and a thread in a thread's tail key. Ids and threads never hold control
# characters (the server refuses them), so the tails of two memories or two threads never meet.
_THREAD_SEP = "\x1f"


def tail_key(memory_key: str, thread: str | None) -> str:
    """The tail key of one thread of a memory; the default thread's is the memory's own key."""
    if thread is None or thread == DEFAULT_THREAD:
        return memory_key
    return memory_key + _THREAD_SEP + thread


@dataclass
class Tail:
    instructions: str  # as decorated: your instructions + "\n\n" + context_text
    context_text: str  # the context blocks (facts, recall, failures) of the last successful decorate
    messages: list[Any]  # newest first-to-last, already cut to tail_tokens when ``cut`` is True
    cut: bool = False
    seq: int = 0  # the decorate that wrote it, in the order decorates started (see refresh)
    memory_id: str | None = None  # the server's id (a tail keyed by external id learns it here)


def join_instructions(own: str | None, context_text: str) -> str:
    """The server's rule: own instructions, then "\\n\\n", then the context (either may be empty)."""
    own = own or ""
    if own and context_text:
        return own + "\n\n" + context_text
    return own or context_text


def split_system(
    messages: Sequence[Mapping[str, Any]], instructions: str | None
) -> tuple[list[Any], str | None]:
    """Like the server: system messages set the instructions (joined), an explicit value wins."""
    if not any(isinstance(m, Mapping) and m.get("role") == "system" for m in messages):
        return list(messages), instructions
    rest, system = [], []
    for m in messages:
        if isinstance(m, Mapping) and m.get("role") == "system":
            content = m.get("content")
            if isinstance(content, list):
                content = "\n".join(str(p.get("text") or "") for p in content if isinstance(p, Mapping))
            system.append(str(content or ""))
        else:
            rest.append(m)
    return rest, instructions if instructions is not None else "\n\n".join(system)


class TailStore:
    def __init__(self, *, tail_tokens: int, max_tails: int) -> None:
        self.tail_tokens = tail_tokens
        self.max_tails = max_tails
        self._lock = threading.Lock()
        self._tails: OrderedDict[str, Tail] = OrderedDict()
        self._degraded: OrderedDict[str, int] = OrderedDict()  # key -> seq of the decorate that fell back
        self._seq = 0

    def after_fork(self) -> None:
        """In a forked child: a new lock (another thread of the parent may have held this one).
        The tails themselves stay: the child falls back to what the parent had seen."""
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._tails)

    def __contains__(self, key: str) -> bool:
        return key in self._tails

    def get(self, key: str) -> Tail | None:
        """The tail as the next fallback would use it (cut to tail_tokens), without touching LRU order."""
        with self._lock:
            tail = self._tails.get(key)
            if tail is not None:
                self._cut(tail)
            return tail

    def next_seq(self) -> int:
        """A number for a decorate as it starts: later decorates get larger ones."""
        with self._lock:
            self._seq += 1
            return self._seq

    def memory_id_of(self, key: str) -> str | None:
        """The server's id of a tail (for a tail keyed by external id: learnt from its decorate, or
        from a decorate in the memory's default thread)."""
        tail = self._tails.get(key) or self._tails.get(key.split(_THREAD_SEP, 1)[0])
        return tail.memory_id if tail is not None else None

    def refresh(
        self,
        key: str,
        *,
        instructions: str,
        context_text: str,
        messages: list[Any],
        clear_degraded: bool = True,
        seq: int | None = None,
        server_id: str | None = None,
    ) -> bool:
        """Mirror a successful decorate. O(1): the cut happens when a fallback or report needs it.

        ``seq`` (from next_seq when the decorate started) keeps the newest: the answer of a
        decorate that started before the one already mirrored (a slow server, two threads on one
        memory) is ignored, and it ends only a degraded state older than itself. False when ignored.
        """
        if seq is None:
            seq = self.next_seq()
        tail = Tail(instructions, context_text, list(messages), seq=seq, memory_id=server_id)
        with self._lock:
            current = self._tails.get(key)
            if current is not None and current.seq > seq:
                return False
            self._tails[key] = tail
            self._tails.move_to_end(key)
            if len(self._tails) > self.max_tails:
                self._tails.popitem(last=False)
            if clear_degraded and self._degraded and self._degraded.get(key, seq) < seq:
                self._degraded.pop(key, None)
            return True

    def append(self, key: str, messages: Sequence[Mapping[str, Any]]) -> None:
        """A successful report: its messages join the tail, so a fallback right after has the reply."""
        if not messages:
            return
        with self._lock:
            tail = self._tails.get(key)
            if tail is None:
                tail = self._tails[key] = Tail("", "", [], seq=0)
                if len(self._tails) > self.max_tails:
                    self._tails.popitem(last=False)
            else:
                self._tails.move_to_end(key)
            tail.messages = tail.messages + list(messages)
            tail.cut = False
            self._cut(tail)

    def fallback(
        self, key: str, messages: list[Any], instructions: str | None, seq: int | None = None
    ) -> tuple[str, str, list[Any]]:
        """(instructions, context_text, messages) for a degraded request: tail + the new messages.

        New instructions replace the tail's own part and keep its context blocks. Without a tail:
        the new instructions and the new messages. Marks the tail degraded (the reports of its thread
        are skipped until the next successful decorate in it).
        """
        with self._lock:
            if seq is None:
                self._seq += 1
                seq = self._seq
            self._degraded[key] = max(seq, self._degraded.get(key, 0))
            self._degraded.move_to_end(key)
            if len(self._degraded) > self.max_tails * _DEGRADED_FACTOR:
                self._degraded.popitem(last=False)
            tail = self._tails.get(key)
            if tail is None:
                return instructions or "", "", list(messages)
            self._tails.move_to_end(key)
            self._cut(tail)
            history = tail.messages
        text = (
            tail.instructions if instructions is None else join_instructions(instructions, tail.context_text)
        )
        return text, tail.context_text, history + list(messages)

    def is_degraded(self, key: str) -> bool:
        return key in self._degraded

    def forget(self, key: str) -> None:
        """Drop one tail (a deleted thread's)."""
        with self._lock:
            self._tails.pop(key, None)
            self._degraded.pop(key, None)

    def forget_memory(self, memory_key: str) -> None:
        """Drop a memory's tails, every thread's (a deleted memory's)."""
        prefix = memory_key + _THREAD_SEP
        with self._lock:
            for keys in (self._tails, self._degraded):
                for key in [k for k in keys if k == memory_key or k.startswith(prefix)]:
                    del keys[key]

    def _cut(self, tail: Tail) -> None:
        # Called with the lock held. The newest messages that fit tail_tokens, starting at a user
        # message; if not one turn fits, from the newest user message onward (threadless.window).
        if not tail.cut:
            start = fit_window(tail.messages, (), self.tail_tokens)
            if start:
                tail.messages = tail.messages[start:]
            tail.cut = True
