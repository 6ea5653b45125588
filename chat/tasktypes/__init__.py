"""Task types of the turn pipeline, one module each (SPEC 6.1).

Named `tasktypes`, not `tasks`: Celery autodiscovers `<app>.tasks` as the app's Celery tasks.
Every module has `run(ctx: TaskContext, task: dict) -> TaskResult` and raises `TaskFailure`.
Tasks never write to the database: they return what they produced and the runner writes it
(so an interrupted or failed task leaves nothing half-written).
"""

from chat.tasktypes import behavior_rules, http_call, llm, output
from chat.tasktypes.base import (
    TaskContext,
    TaskFailure,
    TaskInterrupted,
    TaskResult,
    specific_reason,
)

RUNNERS = {"behavior_rules": behavior_rules, "http_call": http_call, "llm": llm, "output": output}

__all__ = [
    "RUNNERS",
    "TaskContext",
    "TaskFailure",
    "TaskInterrupted",
    "TaskResult",
    "runner_for",
    "specific_reason",
]


def runner_for(task_type: str):
    return RUNNERS[task_type]
