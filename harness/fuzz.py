"""Schemathesis against a running server's /v1/openapi.json with a real project key: every
operation gets generated requests (valid and invalid), half of them aimed at real ids, and every
response must be a non-5xx that matches the schema (documented status, content type, body).

Used by tests/security/test_fuzz.py (a bounded run) and by `make reliability` (a longer one).
"""

from __future__ import annotations

import secrets
import warnings
from dataclasses import dataclass, field

import httpx
import orjson


def _ndjson(ctx, value) -> bytes:
    """POST /v1/memories/import takes JSON Lines (an exported memory): the generated value as one line,
    or each item of a generated list as a line (schemathesis has no serializer of its own for it)."""
    items = value if isinstance(value, list) else [value]
    return b"".join(orjson.dumps(item) + b"\n" for item in items)


@dataclass
class FuzzResult:
    operations: int = 0
    requests: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


def _real_ids(base_url: str, key: str) -> dict[str, list[str]]:
    """A memory with history and a fact, for path parameters that should exist."""
    with httpx.Client(
        base_url=base_url + "/v1", headers={"Authorization": f"Bearer {key}"}, timeout=30
    ) as client:
        ids: dict[str, list[str]] = {"memory_id": [], "fact_id": []}
        for i in range(3):
            memory = client.post("/memories", json={"metadata": {"fuzz": str(i)}}).json()
            client.post(
                f"/memories/{memory['id']}/decorate",
                json={"messages": [{"role": "user", "content": f"My name is Fuzz {i}."}]},
            )
            client.post(
                f"/memories/{memory['id']}/report",
                json={
                    "messages": [{"role": "assistant", "content": "Hi."}],
                    "failures": [{"task_id": "tool", "error": "HTTP 500"}],
                },
            )
            fact = client.post(
                f"/memories/{memory['id']}/facts", json={"text": f"The user is Fuzz {i}."}
            ).json()
            ids["memory_id"].append(memory["id"])
            ids["fact_id"].append(fact.get("id", "fact_x"))
        agent = client.post(
            "/agents",
            json={
                "name": f"Fuzz agent {secrets.token_hex(3)}",
                "config": {"workflow": [{"id": "llm", "type": "llm", "provider": "demo"}]},
            },
        )
        if agent.status_code == 201:
            agent_id = agent.json()["id"]
            conversation = client.post(f"/agents/{agent_id}/conversations", json={})
            if conversation.status_code == 201:
                conversation_id = conversation.json()["id"]
                client.post(f"/conversations/{conversation_id}/say", json={"input": "Hello"})
                ids["agent_id"] = [agent_id]
                ids["conversation_id"] = [conversation_id]
                ids["number"] = [1]
        return ids


def _fuzz_operation(
    operation,
    mode: str,
    *,
    base_url: str,
    headers: dict,
    real: dict,
    checks: list,
    max_examples: int,
    seed: int,
    result: FuzzResult,
) -> None:
    import schemathesis
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hseed
    from hypothesis import strategies as st

    generation = (
        schemathesis.GenerationMode.POSITIVE if mode == "positive" else schemathesis.GenerationMode.NEGATIVE
    )
    try:
        strategy = operation.as_strategy(generation_mode=generation)
    except Exception as exc:  # noqa: BLE001 - an operation schemathesis cannot generate for
        result.failures.append(
            f"{operation.method.upper()} {operation.path} [{mode}]: cannot generate: {exc!r}"
        )
        return

    @hseed(seed)
    @settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy, pick=st.integers(0, 3))
    def run(case, pick):
        # Three times in four, aim the path at an id that exists (else nearly every call is a 404).
        for name, values in real.items():
            if name in (case.path_parameters or {}) and pick < 3:
                case.path_parameters[name] = values[pick % len(values)]
        response = case.call(base_url=base_url, headers=headers, timeout=30)
        result.requests += 1
        result.statuses[response.status_code] = result.statuses.get(response.status_code, 0) + 1
        try:
            case.validate_response(response, checks=checks, headers=headers)
        except (Exception, BaseExceptionGroup) as exc:  # noqa: BLE001 - schemathesis raises a BaseExceptionGroup
            text = str(exc).strip().splitlines()
            summary = " | ".join(line for line in text[:6] if line.strip())
            failure = (
                f"{case.method} {case.formatted_path} [{mode}] -> {response.status_code}: {summary[:400]}"
            )
            if failure not in result.failures:
                result.failures.append(failure)

    try:
        run()
    except (Exception, BaseExceptionGroup) as exc:  # noqa: BLE001 - a failure group from the test itself
        text = [line for line in str(exc).strip().splitlines() if line.strip()]
        failure = f"{operation.method.upper()} {operation.path} [{mode}]: {' | '.join(text[:6])[:400]}"
        if failure not in result.failures:
            result.failures.append(failure)


def fuzz(
    base_url: str,
    key: str,
    *,
    max_examples: int = 8,
    seed: int = 1,
    modes=("positive", "negative"),
    skip_paths: tuple[str, ...] = (),
) -> FuzzResult:
    import schemathesis
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        response_schema_conformance,
        status_code_conformance,
    )

    warnings.filterwarnings("ignore", module="schemathesis")
    schemathesis.serializer("application/x-ndjson")(_ndjson)
    schema = schemathesis.openapi.from_url(base_url + "/v1/openapi.json")
    real = _real_ids(base_url, key)
    result = FuzzResult()
    headers = {"Authorization": f"Bearer {key}"}
    checks = [
        not_a_server_error,
        status_code_conformance,
        content_type_conformance,
        response_schema_conformance,
    ]
    for op_result in schema.get_all_operations():
        operation = op_result.ok()
        if any(operation.path.startswith(p) for p in skip_paths):
            continue
        result.operations += 1
        for mode in modes:
            _fuzz_operation(
                operation,
                mode,
                base_url=base_url,
                headers=headers,
                real=real,
                checks=checks,
                max_examples=max_examples,
                seed=seed,
                result=result,
            )
    return result
