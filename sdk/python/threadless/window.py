"""Token estimates and history-window fitting: the one implementation.

The Threadless server imports this module and the SDK's local tail uses it, so both cut a
conversation at exactly the same place. The TypeScript SDK mirrors it and all three are checked
against the shared vectors in ``sdk/testdata/window_cases.json``. Pure functions, no I/O.

The rules (SPEC 4.3):

* A text costs a quarter token per code point below U+3000 and one token per code point from
  U+3000 up (CJK and the like). A message costs ``ceil(sum over its texts) + 4`` plus 256 per
  non-text content part (an image, say). Its texts are the text content parts and, when it has
  tool calls, the compact JSON of the whole ``tool_calls`` list.
* A window walks back from the newest history message while history + new messages stay within
  the budget, and always starts at a user message, so a tool call is never separated from its
  result. If not even one turn fits, it keeps from the newest user message onward.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from itertools import accumulate
from typing import Any

__all__ = [
    "MESSAGE_OVERHEAD",
    "NON_TEXT_PART_TOKENS",
    "WindowFitter",
    "fit_window",
    "message_tokens",
    "text_quarters",
]

MESSAGE_OVERHEAD = 4
NON_TEXT_PART_TOKENS = 256

_WIDE = re.compile("[\u3000-\U0010ffff]")


def text_quarters(text: str) -> int:
    """Quarter tokens of one text: 1 per code point below U+3000, 4 per code point from it up."""
    if text.isascii():
        return len(text)
    return len(text) + 3 * len(_WIDE.findall(text))


def message_tokens(message: Mapping[str, Any]) -> int:
    """Estimated tokens of one OpenAI-chat-shaped message."""
    quarters = 0
    extra = 0
    content = message.get("content")
    if isinstance(content, str):
        quarters += text_quarters(content)
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, Mapping) and part.get("type") == "text":
                quarters += text_quarters(str(part.get("text") or ""))
            elif isinstance(part, str):
                quarters += text_quarters(part)
            else:
                extra += NON_TEXT_PART_TOKENS
    tool_calls = message.get("tool_calls")
    if tool_calls:
        quarters += text_quarters(json.dumps(tool_calls, separators=(",", ":"), ensure_ascii=False))
    return (quarters + 3) // 4 + extra + MESSAGE_OVERHEAD


class WindowFitter:
    """Decides how many of the newest history messages fit, fed newest first.

    ``reserved`` is what the new messages cost; ``new_has_user`` says whether they contain a
    user message (then the oversized-turn rule keeps no history: the newest user message is new).
    Call :meth:`push` with each history message's tokens and role, newest first, until it
    returns False; then :attr:`keep` is the number of newest history messages in the window.
    Reading stops as soon as the budget is exceeded, so a caller streaming rows from an index
    reads O(window) rows, never the whole memory.
    """

    __slots__ = ("budget", "used", "seen", "keep", "newest_user", "new_has_user", "_over")

    def __init__(self, budget: int, reserved: int = 0, new_has_user: bool = False) -> None:
        self.budget = budget
        self.used = reserved
        self.seen = 0
        self.keep = 0
        self.newest_user: int | None = None
        self.new_has_user = new_has_user
        self._over = reserved > budget

    def push(self, tokens: int, role: str) -> bool:
        """Feed the next older message. Returns True while more messages could still matter."""
        self.seen += 1
        if not self._over:
            self.used += tokens
            if self.used > self.budget:
                self._over = True
            elif role == "user":
                self.keep = self.seen
        if role == "user" and self.newest_user is None:
            self.newest_user = self.seen
        if self._over:
            # Over budget: only the oversized-turn rule can still change the answer, and it
            # needs the newest user message, which may lie further back.
            return self.keep == 0 and not self.new_has_user and self.newest_user is None
        return True

    def push_many(self, tokens: Sequence[int], roles: Sequence[str]) -> bool:
        """Feed these older messages, newest first: the same as :meth:`push` on each in turn until
        it returns False, and its last answer. The messages that still fit the budget are taken
        at once (running sums and the first and last user message among them), so a caller with a
        list of rows pays per message only past the budget."""
        if self._over or not tokens or min(tokens) < 0:  # the running sums need costs >= 0
            return self._push_each(tokens, roles)
        sums = list(accumulate(tokens, initial=self.used))  # sums[i]: used after i more messages
        fit = bisect_right(sums, self.budget) - 1  # how many fit (sums[0] = used <= budget)
        head = roles[:fit] if fit < len(roles) else roles
        if "user" in head:
            if self.newest_user is None:
                self.newest_user = self.seen + head.index("user") + 1
            self.keep = self.seen + fit - head[::-1].index("user")  # the oldest user message that fits
        self.seen += fit
        self.used = sums[fit]
        if fit == len(tokens):
            return True
        return self._push_each(tokens[fit:], roles[fit:])  # the next goes over: one by one from there

    def _push_each(self, tokens: Sequence[int], roles: Sequence[str]) -> bool:
        go = True
        for cost, role in zip(tokens, roles, strict=True):
            if not (go := self.push(cost, role)):
                break
        return go

    def result(self) -> int:
        """Number of newest history messages to keep."""
        if self.keep:
            return self.keep
        if self._over and not self.new_has_user and self.newest_user is not None:
            return self.newest_user
        return 0


def fit_window(
    history: Sequence[Mapping[str, Any]],
    new_messages: Sequence[Mapping[str, Any]] = (),
    budget: int = 60_000,
    *,
    tokens: Iterable[int] | None = None,
) -> int:
    """Index into ``history`` where the window starts (``len(history)`` keeps none).

    ``tokens`` may carry precomputed estimates for ``history`` (same order) to skip re-counting.
    """
    reserved = sum(message_tokens(m) for m in new_messages)
    new_has_user = any(m.get("role") == "user" for m in new_messages)
    fitter = WindowFitter(budget, reserved, new_has_user)
    counts = list(tokens) if tokens is not None else None
    for i in range(len(history) - 1, -1, -1):
        message = history[i]
        cost = counts[i] if counts is not None else message_tokens(message)
        if not fitter.push(cost, str(message.get("role") or "")):
            break
    return len(history) - fitter.result()
