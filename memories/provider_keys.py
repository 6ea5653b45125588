"""The API key for a model call (an llm task or a project's background model).

The one place that knows both sources: the project's secret store (`apiKeySecret`, the tenant's
own key, which may go to any host the egress policy allows) and the server's environment
(`apiKeyEnv`, only to the destinations THREADLESS_PROVIDER_ENV_ALLOW names). It sits here,
above `projects` and `providers`, because those two never import each other; the provider
clients are then handed the plaintext.
"""

from __future__ import annotations

from projects.services import secret_name_reserved, secret_value
from providers.egress import env_api_key


def provider_api_key(*, project_id: str, task: dict) -> str | None:
    """The task's key, or None when it names none. Raises LookupError with a digest-fit reason."""
    if task.get("apiKeySecret"):
        if secret_name_reserved(task["apiKeySecret"]):  # a config written past validation
            raise LookupError(
                f"the secret '{task['apiKeySecret']}' is a proxy upstream key; an agent cannot use it"
            )
        return secret_value(project_id=project_id, name=task["apiKeySecret"])
    return env_api_key(task)
