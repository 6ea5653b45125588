"""`behavior_rules`: every rule whose conditions all hold emits its actions, in order."""

from __future__ import annotations

import re
from functools import lru_cache

from ..config import _list_or_csv
from . import TaskContext, TaskResult


@lru_cache(maxsize=512)
def _expression(expr: str) -> re.Pattern[str]:
    words = " ".join(expr.lower().split())
    body = ".*".join(re.escape(part) for part in words.split("*"))
    return re.compile(r"(?<!\w)" + body + r"(?!\w)" if words.strip("*") else ".*", re.S)


def input_matches(text: str, expressions: list[str]) -> bool:
    normalized = " ".join(text.lower().split())
    return any(_expression(expr).search(normalized) for expr in expressions)


def _holds(cond: dict, ctx: TaskContext, actions: list[str]) -> bool:
    kind = cond.get("type")
    configs = cond.get("configs") or {}
    if kind == "inputmatcher":
        return input_matches(ctx.input, _list_or_csv(configs.get("expressions", ""), "expressions"))
    if kind == "actionmatcher":
        wanted = set(_list_or_csv(configs.get("actions", ""), "actions"))
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
