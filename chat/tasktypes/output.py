"""`output`: for each current action, in order, one alternative of each matching output."""

from __future__ import annotations

from chat.tasktypes.base import TaskContext, TaskResult
from common.tokens import message_tokens


def run(ctx: TaskContext, task: dict) -> TaskResult:
    result = TaskResult()
    for action in ctx.actions:
        for item in task.get("outputSet") or []:
            if item.get("action") != action:
                continue
            for output in item.get("outputs") or []:
                alternatives = output.get("valueAlternatives") or []
                if not alternatives:
                    continue
                # Deterministic choice that still varies from turn to turn.
                chosen = alternatives[(ctx.turn - 1) % len(alternatives)]
                text = chosen.get("text", "")
                result.output.append({"type": "text", "text": text})
                message = {"role": "assistant", "content": text}
                result.entries.append(
                    {
                        "kind": "message",
                        "role": "assistant",
                        "content": text,
                        "task_id": "",
                        "tokens": message_tokens(message),
                    }
                )
    return result
