"""`behavior_rules`: every rule whose conditions all hold emits its actions, in order."""

from __future__ import annotations

import re
from functools import lru_cache

from chat.config import list_or_csv
from chat.tasktypes.base import TaskContext, TaskResult

_WORD = re.compile(r"\w")


@lru_cache(maxsize=512)
def _parts(expr: str) -> tuple[str, ...] | None:
    """An expression's literal parts between its `*` wildcards (None: it matches any input)."""
    words = " ".join(expr.lower().split())
    return tuple(words.split("*")) if words.strip("*") else None


def _word_at(text: str, i: int) -> bool:
    return 0 <= i < len(text) and _WORD.match(text, i) is not None


def _wildcard_search(text: str, parts: tuple[str, ...]) -> bool:
    r"""Whether `(?<!\w)p0.*p1.*…pk(?!\w)` occurs in `text`, without a backtracking regex (several
    `.*` in one pattern are polynomial in the input): each part is taken at its earliest place
    after the previous one, which leaves the most room for the rest, so this is exact and linear."""
    first, last = parts[0], parts[-1]
    i = text.find(first)
    while i != -1 and first and _word_at(text, i - 1):
        i = text.find(first, i + 1)
    if i == -1:
        return False
    if len(parts) == 1:  # one literal: both boundaries on the same occurrence
        while i != -1:
            if not _word_at(text, i - 1) and not _word_at(text, i + len(first)):
                return True
            i = text.find(first, i + 1)
        return False
    end = i + len(first)
    for part in parts[1:-1]:
        i = text.find(part, end)
        if i == -1:
            return False
        end = i + len(part)
    if not last:  # a trailing `*` runs to the end of the input, where (?!\w) holds
        return True
    i = text.find(last, end)
    while i != -1:
        if not _word_at(text, i + len(last)):
            return True
        i = text.find(last, i + 1)
    return False


def input_matches(text: str, expressions: list[str]) -> bool:
    normalized = " ".join(text.lower().split())
    for expr in expressions:
        parts = _parts(expr)
        if parts is None or _wildcard_search(normalized, parts):
            return True
    return False


def _holds(cond: dict, ctx: TaskContext, actions: list[str]) -> bool:
    kind = cond.get("type")
    configs = cond.get("configs") or {}
    if kind == "inputmatcher":
        return input_matches(ctx.input, list_or_csv(configs.get("expressions", ""), "expressions"))
    if kind == "actionmatcher":
        wanted = set(list_or_csv(configs.get("actions", ""), "actions"))
        occurrence = configs.get("occurrence", "currentStep")
        if occurrence == "currentStep":
            # The previous turn's task_failed_* actions count as this step's (seed 000: the
            # action is visible to the next turn's behavior rules).
            return bool(wanted & set(actions)) or bool(wanted & set(ctx.previous_failures()))
        history = ctx.history_actions()
        if occurrence == "lastStep":
            return bool(history and wanted & set(history[-1]))
        seen = set(actions).union(*map(set, history)) if history else set(actions)
        if occurrence == "anyStep":
            return bool(wanted & seen)
        return not (wanted & seen)  # never
    subs = cond.get("conditions") or []
    if kind == "negation":
        return not all(_holds(c, ctx, actions) for c in subs)
    if kind == "connector":
        results = (_holds(c, ctx, actions) for c in subs)
        return any(results) if str(configs.get("operator", "AND")).upper() == "OR" else all(results)
    return False


def run(ctx: TaskContext, task: dict) -> TaskResult:
    emitted: list[str] = []
    for rule in task.get("behaviorRules") or []:
        current = ctx.actions + emitted
        if all(_holds(cond, ctx, current) for cond in rule.get("conditions") or []):
            emitted.extend(a for a in rule.get("actions") or [] if a not in current and a not in emitted)
    return TaskResult(actions=emitted)
