"""Secret canaries: fake secrets pushed through reported failures (every policy), digests, the
decorate answer, error bodies and the logs. Not one of them may come back out, anywhere: not in a
response, not in a stored row a model or caller can see, not in a log line.
"""

from __future__ import annotations

import io
import logging

import pytest

from common.redaction import RedactingFilter
from memories.models import Entry, ErrorDigest, Memory, Turn

JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjYW5hcnkifQ.Q2FuYXJ5U2lnbmF0dXJl"
CANARIES = {
    "openai": "sk-canaryOpenAiSecret0123456789abcd",
    "anthropic": "sk-ant-canaryAnthropic0123456789",
    "jwt": JWT,
    "password": "hunter2-canary-pw",
    "token": "canaryTokenValue987",
}
# What must never appear: the distinctive part of each canary.
NEEDLES = [
    "canaryOpenAiSecret",
    "canaryAnthropic",
    "Q2FuYXJ5U2lnbmF0dXJl",
    "hunter2-canary-pw",
    "canaryTokenValue987",
]

POLICIES = {
    "off": None,
    "digest": {"strictWriteDiscipline": {"enabled": True, "onFailure": "digest"}},
    "keep_all": {"strictWriteDiscipline": {"enabled": True, "onFailure": "keep_all"}},
    "exclude_all": {"strictWriteDiscipline": {"enabled": True, "onFailure": "exclude_all"}},
}


def provider_error(other_key: str) -> str:
    return (
        f'{{"error": {{"message": "Incorrect API key provided: {CANARIES["openai"]} (also tried '
        f'{CANARIES["anthropic"]} and {other_key})", "type": "invalid_request_error"}}}} '
        f"while calling https://api.example.test/v1/chat?api_key={CANARIES['openai']} with "
        f"Authorization: Bearer {CANARIES['jwt']} password={CANARIES['password']} token: {CANARIES['token']}"
    )


def leaks(text: str, extra: list[str]) -> list[str]:
    return [n for n in NEEDLES + extra if n in text]


@pytest.fixture
def log_stream():
    """The configured console handler (the one with the redacting filter), writing to a buffer."""
    handlers = [
        h
        for h in logging.getLogger().handlers
        if isinstance(h, logging.StreamHandler) and any(isinstance(f, RedactingFilter) for f in h.filters)
    ]
    assert handlers, "the logging config must install RedactingFilter on the console handler"
    buffer = io.StringIO()
    old = [h.setStream(buffer) for h in handlers]
    root_level = logging.getLogger().level
    logging.getLogger().setLevel(logging.DEBUG)
    yield buffer
    logging.getLogger().setLevel(root_level)
    for handler, stream in zip(handlers, old, strict=True):
        handler.setStream(stream)


@pytest.mark.parametrize("policy", list(POLICIES))
def test_reported_failures_never_give_a_secret_back(cast, log_stream, policy):
    other_key_secret = cast.key_b[-32:]
    memory = cast.a.post(
        "/v1/memories", {"policy": POLICIES[policy]} if POLICIES[policy] else {}, format="json"
    ).json()
    mid = memory["id"]
    assert (
        cast.a.post(
            f"/v1/memories/{mid}/decorate",
            {"messages": [{"role": "user", "content": "weather?"}]},
            format="json",
        ).status_code
        == 200
    )
    error = provider_error(cast.key_b)
    report = cast.a.post(
        f"/v1/memories/{mid}/report",
        {
            "messages": [{"role": "assistant", "content": "Let me check."}],
            "failures": [{"task_id": "eddi://ai.labs.llm", "error": error, "output": {"raw": error}}],
        },
        format="json",
    )
    assert report.status_code == 202, report.content
    logging.getLogger("threadless.canary").warning("provider answered: %s", error)

    outputs = [report.content.decode()]
    outputs.append(
        cast.a.get(f"/v1/memories/{mid}/entries?include_uncommitted=true&limit=1000").content.decode()
    )
    outputs.append(
        cast.a.post(
            f"/v1/memories/{mid}/decorate",
            {"messages": [{"role": "user", "content": "again"}]},
            format="json",
        ).content.decode()
    )
    outputs.append(cast.a.get(f"/v1/memories/{mid}").content.decode())
    stored = Memory.objects.get(pk=mid)
    outputs += list(Entry.objects.filter(memory=stored).values_list("content", flat=True))
    outputs += [str(v) for v in Entry.objects.filter(memory=stored).values_list("value", flat=True)]
    for digest in ErrorDigest.objects.filter(memory=stored):
        outputs += [digest.text, digest.raw_error]
    outputs += [str(t.task_errors) for t in Turn.objects.filter(memory=stored)]
    outputs.append(log_stream.getvalue())

    found = {
        i: leaks(text, [other_key_secret])
        for i, text in enumerate(outputs)
        if leaks(text, [other_key_secret])
    }
    assert found == {}, f"secrets came back out: {found}"
    # The failure itself did arrive (the test is not vacuous): staff see a redacted raw error.
    raw = " ".join(Entry.objects.filter(memory=stored, kind="error").values_list("content", flat=True))
    assert "[redacted]" in raw and "Incorrect API key provided" in raw
    assert "[redacted]" in log_stream.getvalue()


def test_error_bodies_never_echo_a_secret(cast, log_stream):
    mid = cast.a.post("/v1/memories", {}, format="json").json()["id"]
    secret = CANARIES["openai"]
    answers = [
        cast.api(secret).get("/v1/memories"),
        cast.api(f"tl_proj_{'A' * 10}{'canaryTokenValue987'.ljust(32, 'x')}").get("/v1/memories"),
        cast.a.post("/v1/memories", {secret: 1}, format="json"),
        cast.a.post("/v1/memories", {"metadata": secret}, format="json"),
        cast.a.post(
            f"/v1/memories/{mid}/decorate", {"messages": [{"role": secret, "content": "x"}]}, format="json"
        ),
        cast.a.post(
            f"/v1/memories/{mid}/decorate", {"messages": [{"role": "user", secret: "x"}]}, format="json"
        ),
        cast.a.post(f"/v1/memories/{mid}/decorate", {"messages": [], "budget_tokens": secret}, format="json"),
        cast.a.post(
            f"/v1/memories/{mid}/report",
            {"failures": [{"task_id": f"bad id {secret}", "error": "x"}]},
            format="json",
        ),
        cast.a.post(
            f"/v1/memories/{mid}/report",
            {"failures": [{"task_id": "t", "error": 1, secret: 2}]},
            format="json",
        ),
        cast.a.post(
            f"/v1/memories/{mid}/report", f'{{"messages": [{secret}', content_type="application/json"
        ),
        cast.a.get(f"/v1/memories/{secret}"),
        cast.a.get(f"/v1/memories/{mid}/entries?cursor={secret}"),
        cast.a.patch(f"/v1/memories/{mid}/facts/{secret}", {"text": "x"}, format="json"),
    ]
    for response in answers:
        assert 400 <= response.status_code < 500, response.content
        body = response.content.decode()
        assert "error" in response.json()
        assert leaks(body, []) == [], body
    assert leaks(log_stream.getvalue(), []) == []
