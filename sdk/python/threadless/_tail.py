"""The local tail: what decorate falls back to when the service cannot answer.

Per memory, in this process's memory only (a restarted process has no tail), for the
``max_tails`` most recently used memories. Refreshed from every successful decorate; a
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

__all__ = ["Tail", "TailStore", "join_instructions", "split_system"]

# Memories whose last decorate was degraded (their reports are skipped); bounded like the tails.
_DEGRADED_FACTOR = 4


@dataclass
class Tail:
    instructions: str  # as decorated: your instructions + "\n\n" + context_text
    context_text: str  # the context blocks (facts, recall, failures) of the last successful decorate
    messages: list  # newest first-to-last, already cut to tail_tokens when ``cut`` is True
    cut: bool = False


def join_instructions(own: str | None, context_text: str) -> str:
    """The server's rule: own instructions, then "\\n\\n", then the context (either may be empty)."""
    own = own or ""
    if own and context_text:
        return own + "\n\n" + context_text
    return own or context_text


def split_system(messages: Sequence[Mapping[str, Any]], instructions: str | None) -> tuple[list, str | None]:
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
        self._degraded: OrderedDict[str, None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._tails)

    def __contains__(self, memory_id: str) -> bool:
        return memory_id in self._tails

    def get(self, memory_id: str) -> Tail | None:
        """The tail as the next fallback would use it (cut to tail_tokens), without touching LRU order."""
        with self._lock:
            tail = self._tails.get(memory_id)
            if tail is not None:
                self._cut(tail)
            return tail

    def refresh(self, memory_id: str, *, instructions: str, context_text: str, messages: list,
                clear_degraded: bool = True) -> None:
        """Mirror a successful decorate. O(1): the cut happens when a fallback or report needs it."""
        tail = Tail(instructions, context_text, list(messages))
        with self._lock:
            self._tails[memory_id] = tail
            self._tails.move_to_end(memory_id)
            if len(self._tails) > self.max_tails:
                self._tails.popitem(last=False)
            if clear_degraded and self._degraded:
                self._degraded.pop(memory_id, None)

    def append(self, memory_id: str, messages: Sequence[Mapping[str, Any]]) -> None:
        """A successful report: its messages join the tail, so a fallback right after has the reply."""
        if not messages:
            return
        with self._lock:
            tail = self._tails.get(memory_id)
            if tail is None:
                tail = self._tails[memory_id] = Tail("", "", [])
                if len(self._tails) > self.max_tails:
                    self._tails.popitem(last=False)
            else:
                self._tails.move_to_end(memory_id)
            tail.messages = tail.messages + list(messages)
            tail.cut = False
            self._cut(tail)

    def fallback(self, memory_id: str, messages: list, instructions: str | None) -> tuple[str, str, list]:
        """(instructions, context_text, messages) for a degraded request: tail + the new messages.

        New instructions replace the tail's own part and keep its context blocks. Without a tail:
        the new instructions and the new messages. Marks the memory degraded (its reports are
        skipped until the next successful decorate).
        """
        with self._lock:
            self._degraded[memory_id] = None
            self._degraded.move_to_end(memory_id)
            if len(self._degraded) > self.max_tails * _DEGRADED_FACTOR:
                self._degraded.popitem(last=False)
            tail = self._tails.get(memory_id)
            if tail is None:
                return instructions or "", "", list(messages)
            self._tails.move_to_end(memory_id)
            self._cut(tail)
            history = tail.messages
        text = tail.instructions if instructions is None else join_instructions(instructions, tail.context_text)
        return text, tail.context_text, history + list(messages)

    def is_degraded(self, memory_id: str) -> bool:
        return memory_id in self._degraded

    def forget(self, memory_id: str) -> None:
        with self._lock:
            self._tails.pop(memory_id, None)
            self._degraded.pop(memory_id, None)

    def _cut(self, tail: Tail) -> None:
        # Called with the lock held. The newest messages that fit tail_tokens, starting at a user
        # message; if not one turn fits, from the newest user message onward (threadless.window).
        if not tail.cut:
            start = fit_window(tail.messages, (), self.tail_tokens)
            if start:
                tail.messages = tail.messages[start:]
            tail.cut = True
