"""What every task type shares: the context a task runs in, its result and its failures."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from common.causes import innermost_message
from memories.models import Entry, Memory, Turn

GENERIC_TRANSPORT = "connection failed ("
FAILED_PREFIX = "task_failed_"


def specific_reason(reason: str, exc: BaseException | None) -> str:
    """A transport failure's generic `connection failed (ConnectError)` becomes the innermost
    message of its cause chain (a DNS or TLS failure says what went wrong); others stay."""
    if exc is None or not reason.startswith(GENERIC_TRANSPORT):
        return reason
    return innermost_message(exc, default=reason)


@dataclass
class TaskResult:
    actions: list[str] = field(default_factory=list)
    output: list[dict] = field(default_factory=list)  # conversation output items
    entries: list[dict] = field(default_factory=list)  # entry fields to store (data, messages)


class TaskFailure(Exception):
    """`reason` = `<operation> failed: <most specific message>` (the digest text's reason)."""

    def __init__(
        self,
        reason: str,
        *,
        error_type: str = "unknown",
        raw: str = "",
        output: Any = None,
        has_output: bool = False,
        partial: str = "",
    ):
        super().__init__(reason)
        self.reason = reason
        self.error_type = error_type
        self.raw = raw or reason
        self.output = output
        self.has_output = has_output
        self.partial = partial


class TaskInterrupted(Exception):
    def __init__(self, partial: str = ""):
        super().__init__("interrupted")
        self.partial = partial


@dataclass
class TaskContext:
    memory: Memory
    thread: str  # the conversation's thread in `memory` ("default" for a memory of its own)
    project_id: str
    agent_id: str
    turn: int
    attempt: int
    input: str
    input_seq: int
    stream: bool
    actions: list[str]  # emitted so far in this turn (the runner appends)
    emit: Callable[[str, dict], None]
    should_stop: Callable[[], bool]
    _data: dict | None = None
    _history: list[list[str]] | None = None
    turn_data: list[dict] = field(default_factory=list)  # data entries stored this turn: {key, value}

    def data(self) -> dict:
        """storeAs key → latest committed value (earlier turns of this thread), updated with this
        turn's data."""
        if self._data is None:
            rows = (
                Entry.objects.filter(memory=self.memory, thread=self.thread, kind="data", committed=True)
                .filter(seq__lt=self.input_seq)
                .exclude(key="")
                .order_by("-seq")
                .values_list("key", "value")[:200]
            )
            self._data = {}
            for key, value in reversed(list(rows)):
                self._data[key] = value
        merged = dict(self._data)
        for item in self.turn_data:
            merged[item["key"]] = item["value"]
        return merged

    def previous_failures(self) -> list[str]:
        """The `task_failed_<id>` actions of the turn before this one: a failure that ended its
        turn reaches the next turn's behavior rules as if emitted in this step (seed 000)."""
        history = self.history_actions()
        return [a for a in history[-1] if a.startswith(FAILED_PREFIX)] if history else []

    def history_actions(self) -> list[list[str]]:
        """Actions of earlier turns of this thread, oldest first (the newest 500)."""
        if self._history is None:
            rows = (
                Turn.objects.filter(memory=self.memory, thread=self.thread, number__lt=self.turn)
                .order_by("-number")
                .values_list("actions", flat=True)[:500]
            )
            self._history = [list(a or []) for a in reversed(list(rows))]
        return self._history
