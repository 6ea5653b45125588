"""The memory policy: what a failed task leaves behind (strict write discipline, SPEC 6.2) and
whether a model's reasoning items stay in its future view (the proxy's Responses route).

One implementation for reported failures (report) and pipeline task failures (chat turn runner).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from common.errors import InvalidRequest
from common.http.body import reject_unknown

MODES = ("digest", "exclude_all", "keep_all")
# What a reply's reasoning items become: dropped (never stored), or kept with the reply, in the window.
REASONING_ITEMS = ("drop", "keep")


@dataclass(frozen=True)
class Policy:
    enabled: bool = False
    on_failure: str = "digest"
    continue_on_failure: bool = False
    reasoning_items: str = "drop"

    @property
    def mode(self) -> str:
        """'off' or the effective onFailure mode."""
        return self.on_failure if self.enabled else "off"

    @property
    def keeps_reasoning(self) -> bool:
        return self.reasoning_items == "keep"

    def as_json(self) -> dict:
        out: dict[str, Any] = {
            "strictWriteDiscipline": {
                "enabled": self.enabled,
                "onFailure": self.on_failure,
                "continueOnFailure": self.continue_on_failure,
            }
        }
        if self.keeps_reasoning:  # the default is left out, so a policy without it reads as before
            out["reasoningItems"] = self.reasoning_items
        return out


def policy_parse(raw: Any, *, path: str = "policy") -> Policy:
    """Validate a memoryPolicy object; errors name the JSON path."""
    if raw is None or raw == {}:
        return Policy()
    if not isinstance(raw, dict):
        raise InvalidRequest(f'{path}: must be an object like {{"strictWriteDiscipline": {{…}}}}.')
    reject_unknown(raw, {"strictWriteDiscipline", "reasoningItems"}, path)
    reasoning = raw.get("reasoningItems", "drop")
    if reasoning not in REASONING_ITEMS:
        raise InvalidRequest(f"{path}.reasoningItems: must be one of {', '.join(REASONING_ITEMS)}.")
    swd = raw.get("strictWriteDiscipline", {})
    where = f"{path}.strictWriteDiscipline"
    if not isinstance(swd, dict):
        raise InvalidRequest(f"{where}: must be an object.")
    reject_unknown(swd, {"enabled", "onFailure", "continueOnFailure"}, where)
    enabled = swd.get("enabled", False)
    if not isinstance(enabled, bool):
        raise InvalidRequest(f"{where}.enabled: must be true or false.")
    on_failure = swd.get("onFailure", "digest")
    if on_failure not in MODES:
        raise InvalidRequest(f"{where}.onFailure: must be one of {', '.join(MODES)}.")
    cont = swd.get("continueOnFailure", False)
    if not isinstance(cont, bool):
        raise InvalidRequest(f"{where}.continueOnFailure: must be true or false.")
    return Policy(enabled=enabled, on_failure=on_failure, continue_on_failure=cont, reasoning_items=reasoning)


def plain_task_id(task_id: str) -> str:
    """A task id without its scheme prefix (eddi://ai.labs.llm → ai.labs.llm)."""
    return task_id.split("://", 1)[1] if "://" in task_id else task_id


def failed_action(task_id: str) -> str:
    return f"task_failed_{plain_task_id(task_id)}"


@dataclass(frozen=True)
class FailureRules:
    """What SPEC 6.2's table says for one policy."""

    data_committed: bool
    keep_output: bool
    digest: bool
    action: bool
    task_error: bool


def failure_rules(policy: Policy) -> FailureRules:
    return {
        "off": FailureRules(
            data_committed=True, keep_output=True, digest=False, action=False, task_error=True
        ),
        "digest": FailureRules(
            data_committed=False, keep_output=False, digest=True, action=True, task_error=True
        ),
        "exclude_all": FailureRules(
            data_committed=False, keep_output=False, digest=False, action=True, task_error=False
        ),
        "keep_all": FailureRules(
            data_committed=True, keep_output=True, digest=False, action=True, task_error=True
        ),
    }[policy.mode]
