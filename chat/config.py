"""Agent configuration (SPEC 6.1): validation with JSON-path errors, and the effective workflow.

`config_validate` raises `InvalidRequest("workflow[2].request.url: …")` naming the offending
path. `workflow_of` expands the seed's shorthand (top-level `behaviorRules` / `outputSet`)
into a `behavior_rules` task first and an `output` task last. API keys never live in the
config: only `apiKeySecret` (the secret store) or `apiKeyEnv` (an allowed variable name).
"""

from __future__ import annotations

import re
from typing import Any

from common.errors import InvalidRequest
from common.redaction import echo
from memories.policy import Policy, policy_parse
from projects.services import secret_name_reserved
from providers.egress import base_url_refusal, egress_refusal, provider_env_names, provider_env_refusal

TASK_ID = re.compile(r"(?:[a-zA-Z][\w+.-]*://)?[A-Za-z0-9._-]{1,120}")
TASK_TYPES = ("behavior_rules", "http_call", "llm", "output")
PROVIDERS = ("openai", "anthropic", "demo")
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD")
OCCURRENCES = ("currentStep", "lastStep", "anyStep", "never")
TOP_LEVEL = {
    "memoryPolicy",
    "workflow",
    "behaviorRules",
    "outputSet",
    "allowedOrigins",
    "description",
    "limits",
}
# End-user limits an agent may set for itself (chat.limits); each overrides the server's default.
LIMITS = {"concurrentTurns": 100_000, "turnsPerDay": 100_000_000}
RULES_TASK_ID = "behaviorRules"
OUTPUT_TASK_ID = "outputSet"
MAX_TIMEOUT_MS = 120_000


def _fail(path: str, message: str):
    raise InvalidRequest(f"{path}: {message}", hint="Fix the agent config at that JSON path (SPEC 6.1).")


def _unknown(obj: dict, allowed: set[str], path: str) -> None:
    extra = sorted(set(obj) - allowed)
    if extra:
        where = f"{path}.{echo(extra[0])}" if path else echo(extra[0])
        _fail(where, "unknown field.")


def _str(value: Any, path: str, *, required: bool = True, max_len: int = 10_000) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        _fail(path, "must be a non-empty string.")
    if len(value) > max_len:
        _fail(path, f"at most {max_len} characters.")
    return value


def list_or_csv(value: Any, path: str) -> list[str]:
    """`configs.actions` / `expressions`: a comma-separated string or a list of strings."""
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v.strip() for v in value if v.strip()]
    _fail(path, "must be a comma-separated string or a list of strings.")


def _url(value: Any, path: str) -> str:
    if not isinstance(value, str) or not re.match(r"^https?://[^\s/?#{}]+", value.strip()):
        _fail(path, "must be an http:// or https:// URL (templates like {{ input }} may follow the host).")
    if re.match(r"^https?://[^/?#]*@", value.strip()):
        _fail(path, "must not contain user info (user:password@); send credentials in a header.")
    _egress(value.strip(), path)
    return value


def _egress(url: str, path: str) -> None:
    """A URL whose host the egress policy refuses is a config error now, not a failed turn later
    (templates come after the host, so the host is known at save)."""
    scheme, _, rest = url.partition("://")
    refusal = egress_refusal(f"{scheme}://{re.split(r'[/?#]', rest, maxsplit=1)[0]}/")
    if refusal:
        _fail(path, refusal)


def _condition(cond: Any, path: str) -> None:
    if not isinstance(cond, dict):
        _fail(path, "must be an object with 'type' and 'configs'.")
    _unknown(cond, {"type", "configs", "conditions"}, path)
    kind = cond.get("type")
    configs = cond.get("configs", {}) or {}
    if not isinstance(configs, dict):
        _fail(f"{path}.configs", "must be an object.")
    if kind == "inputmatcher":
        if "expressions" not in configs:
            _fail(f"{path}.configs.expressions", "is required (comma-separated words or phrases).")
        list_or_csv(configs["expressions"], f"{path}.configs.expressions")
    elif kind == "actionmatcher":
        if "actions" not in configs:
            _fail(f"{path}.configs.actions", "is required.")
        list_or_csv(configs["actions"], f"{path}.configs.actions")
        occurrence = configs.get("occurrence", "currentStep")
        if occurrence not in OCCURRENCES:
            _fail(f"{path}.configs.occurrence", f"must be one of {', '.join(OCCURRENCES)}.")
    elif kind in ("negation", "connector"):
        if kind == "connector":
            operator = str(configs.get("operator", "AND")).upper()
            if operator not in ("AND", "OR"):
                _fail(f"{path}.configs.operator", "must be AND or OR.")
        subs = cond.get("conditions")
        if not isinstance(subs, list) or not subs:
            _fail(f"{path}.conditions", "must be a non-empty list of conditions.")
        for i, sub in enumerate(subs):
            _condition(sub, f"{path}.conditions[{i}]")
    else:
        _fail(f"{path}.type", "must be one of inputmatcher, actionmatcher, negation, connector.")


def _behavior_rules(rules: Any, path: str) -> None:
    if not isinstance(rules, list):
        _fail(path, "must be a list of rules.")
    for i, rule in enumerate(rules):
        where = f"{path}[{i}]"
        if not isinstance(rule, dict):
            _fail(where, "must be an object with name, actions and conditions.")
        _unknown(rule, {"name", "actions", "conditions"}, where)
        _str(rule.get("name", "rule"), f"{where}.name")
        actions = rule.get("actions")
        if not isinstance(actions, list) or not all(isinstance(a, str) and a for a in actions):
            _fail(f"{where}.actions", "must be a list of action names.")
        conditions = rule.get("conditions", [])
        if not isinstance(conditions, list):
            _fail(f"{where}.conditions", "must be a list of conditions.")
        for j, cond in enumerate(conditions):
            _condition(cond, f"{where}.conditions[{j}]")


def _output_set(items: Any, path: str) -> None:
    if not isinstance(items, list):
        _fail(path, "must be a list of {action, outputs}.")
    for i, item in enumerate(items):
        where = f"{path}[{i}]"
        if not isinstance(item, dict):
            _fail(where, "must be an object with action and outputs.")
        _unknown(item, {"action", "outputs"}, where)
        _str(item.get("action"), f"{where}.action", max_len=200)
        outputs = item.get("outputs")
        if not isinstance(outputs, list) or not outputs:
            _fail(f"{where}.outputs", "must be a non-empty list.")
        for j, output in enumerate(outputs):
            ow = f"{where}.outputs[{j}]"
            if not isinstance(output, dict):
                _fail(ow, "must be an object with valueAlternatives.")
            _unknown(output, {"valueAlternatives"}, ow)
            alternatives = output.get("valueAlternatives")
            if not isinstance(alternatives, list) or not alternatives:
                _fail(f"{ow}.valueAlternatives", "must be a non-empty list.")
            for k, alt in enumerate(alternatives):
                aw = f"{ow}.valueAlternatives[{k}]"
                if not isinstance(alt, dict):
                    _fail(aw, 'must be an object like {"type": "text", "text": "…"}.')
                _unknown(alt, {"type", "text"}, aw)
                if alt.get("type", "text") != "text":
                    _fail(f"{aw}.type", "must be 'text'.")
                if not isinstance(alt.get("text"), str):
                    _fail(f"{aw}.text", "must be a string.")


def _http_call(task: dict, path: str) -> None:
    _unknown(task, {"id", "type", "actions", "request", "storeAs", "description"}, path)
    request = task.get("request")
    if not isinstance(request, dict):
        _fail(f"{path}.request", "must be an object with method and url.")
    _unknown(request, {"method", "url", "headers", "body", "timeoutMs"}, f"{path}.request")
    method = request.get("method", "GET")
    if not isinstance(method, str) or method.upper() not in METHODS:
        _fail(f"{path}.request.method", f"must be one of {', '.join(METHODS)}.")
    _url(request.get("url"), f"{path}.request.url")
    headers = request.get("headers", {})
    if not isinstance(headers, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
    ):
        _fail(f"{path}.request.headers", "must be an object of strings.")
    timeout = request.get("timeoutMs", 5000)
    if not isinstance(timeout, int) or isinstance(timeout, bool) or not 1 <= timeout <= MAX_TIMEOUT_MS:
        _fail(f"{path}.request.timeoutMs", f"must be an integer from 1 to {MAX_TIMEOUT_MS}.")
    if "storeAs" in task:
        store_as = _str(task["storeAs"], f"{path}.storeAs", max_len=100)
        if not re.fullmatch(r"[A-Za-z_][\w.-]*", store_as):
            _fail(f"{path}.storeAs", "letters, digits, '_', '.' and '-' only.")


def _llm(task: dict, path: str) -> None:
    if "apiKey" in task or "api_key" in task:
        _fail(
            f"{path}.apiKey",
            "API keys never go in the config; use apiKeySecret (the console's secret store) or apiKeyEnv.",
        )
    _unknown(
        task,
        {
            "id",
            "type",
            "actions",
            "provider",
            "model",
            "baseUrl",
            "apiKeyEnv",
            "apiKeySecret",
            "instructions",
            "params",
            "budgetTokens",
            "timeoutMs",
            "description",
        },
        path,
    )
    provider = task.get("provider")
    if provider not in PROVIDERS:
        _fail(f"{path}.provider", f"must be one of {', '.join(PROVIDERS)}.")
    if provider != "demo":
        _str(task.get("model"), f"{path}.model", max_len=200)
    elif "model" in task:
        _str(task.get("model"), f"{path}.model", max_len=200)
    if "baseUrl" in task:
        refusal = base_url_refusal(task["baseUrl"])
        if refusal:
            _fail(f"{path}.baseUrl", refusal)
        _egress(task["baseUrl"], f"{path}.baseUrl")
    if "apiKeyEnv" in task:
        name = _str(task["apiKeyEnv"], f"{path}.apiKeyEnv", max_len=100)
        refusal = provider_env_refusal(name, provider=provider, base_url=task.get("baseUrl"))
        if refusal and name not in provider_env_names():
            _fail(f"{path}.apiKeyEnv", refusal)
        if refusal:  # the server's own key would go to a host the operator did not name
            _fail(f"{path}.baseUrl", refusal)
    if "apiKeySecret" in task:
        _str(task["apiKeySecret"], f"{path}.apiKeySecret", max_len=100)
        if secret_name_reserved(task["apiKeySecret"]):
            # (the redaction of error text takes the first word after "…Secret:", so it says little)
            _fail(
                f"{path}.apiKeySecret",
                "proxy.* is reserved: those are the proxy's upstream keys, which only "
                "the proxy may use; store the key under another name.",
            )
    if "instructions" in task and not isinstance(task["instructions"], str):
        _fail(f"{path}.instructions", "must be a string.")
    params = task.get("params", {})
    if not isinstance(params, dict):
        _fail(f"{path}.params", 'must be an object (e.g. {"temperature": 0.2}).')
    for reserved in ("model", "messages", "stream", "system"):
        if reserved in params:
            _fail(f"{path}.params.{reserved}", "is set by the pipeline; remove it.")
    for name, low, high in (("budgetTokens", 100, 2_000_000), ("timeoutMs", 1, 600_000)):
        if name in task:
            value = task[name]
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                _fail(f"{path}.{name}", f"must be an integer from {low} to {high}.")


def _task(task: Any, path: str) -> None:
    if not isinstance(task, dict):
        _fail(path, "must be an object with id and type.")
    task_id = task.get("id")
    if not isinstance(task_id, str) or not TASK_ID.fullmatch(task_id):
        _fail(f"{path}.id", "letters, digits and ._- (optionally with a scheme prefix such as eddi://).")
    kind = task.get("type")
    if kind not in TASK_TYPES:
        _fail(f"{path}.type", f"must be one of {', '.join(TASK_TYPES)}.")
    if "actions" in task:
        actions = task["actions"]
        if not isinstance(actions, list) or not all(isinstance(a, str) and a for a in actions):
            _fail(f"{path}.actions", "must be a list of action names.")
    if kind == "behavior_rules":
        _unknown(task, {"id", "type", "actions", "behaviorRules", "description"}, path)
        _behavior_rules(task.get("behaviorRules"), f"{path}.behaviorRules")
    elif kind == "output":
        _unknown(task, {"id", "type", "actions", "outputSet", "description"}, path)
        _output_set(task.get("outputSet"), f"{path}.outputSet")
    elif kind == "http_call":
        _http_call(task, path)
    else:
        _llm(task, path)


def _limits(limits: Any) -> None:
    if not isinstance(limits, dict):
        _fail("limits", 'must be an object like {"concurrentTurns": 4, "turnsPerDay": 500}.')
    _unknown(limits, set(LIMITS), "limits")
    for name, high in LIMITS.items():
        if name in limits:
            value = limits[name]
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= high:
                _fail(f"limits.{name}", f"must be an integer from 0 (no limit) to {high}.")


def config_validate(config: Any) -> dict:
    """Validate an agent config; raise InvalidRequest naming the JSON path. Returns the config."""
    if not isinstance(config, dict):
        _fail("config", "must be a JSON object.")
    _unknown(config, TOP_LEVEL, "")
    policy_parse(config.get("memoryPolicy"), path="memoryPolicy")
    if "behaviorRules" in config:
        _behavior_rules(config["behaviorRules"], "behaviorRules")
    if "outputSet" in config:
        _output_set(config["outputSet"], "outputSet")
    workflow = config.get("workflow", [])
    if not isinstance(workflow, list):
        _fail("workflow", "must be a list of tasks.")
    seen: set[str] = set()
    for i, task in enumerate(workflow):
        _task(task, f"workflow[{i}]")
        if task["id"] in seen:
            _fail(f"workflow[{i}].id", f"'{task['id']}' is used by an earlier task; ids must be unique.")
        seen.add(task["id"])
    origins = config.get("allowedOrigins", [])
    if not isinstance(origins, list):
        _fail("allowedOrigins", "must be a list of origins like https://example.com.")
    for i, origin in enumerate(origins):
        if not isinstance(origin, str) or not re.fullmatch(r"https?://[^\s/?#]+/?", origin):
            _fail(
                f"allowedOrigins[{i}]", "must be an origin like https://example.com (scheme and host only)."
            )
    if "limits" in config:
        _limits(config["limits"])
    if not workflow and "behaviorRules" not in config and "outputSet" not in config:
        _fail("workflow", "add at least one task (or the top-level behaviorRules / outputSet shorthand).")
    return config


def workflow_of(config: dict) -> list[dict]:
    """The effective task list: shorthand rules first, the workflow, shorthand output last."""
    tasks = []
    if "behaviorRules" in config:
        tasks.append(
            {"id": RULES_TASK_ID, "type": "behavior_rules", "behaviorRules": config["behaviorRules"]}
        )
    tasks.extend(config.get("workflow", []) or [])
    if "outputSet" in config:
        tasks.append({"id": OUTPUT_TASK_ID, "type": "output", "outputSet": config["outputSet"]})
    return tasks


def policy_of(config: dict) -> Policy:
    return policy_parse(config.get("memoryPolicy"), path="memoryPolicy")
