"""Redaction written as the attack: adversarial input up to 1 MiB through every
place that redacts or echoes it, deep JSON, and the access log of a real uvicorn process.

Each test has a generous timeout (pytest-timeout): a quadratic regression fails the test instead of
hanging the suite. There are no timing assertions; the linear-time figures are in `make bench`
(bench/redaction_bench.py → docs/benchmarks.md).
"""

from __future__ import annotations

import io
import json
import logging
import socket
import threading

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from common.redaction import (
    DIGEST_LIMIT,
    ECHO_LIMIT,
    RAW_LIMIT,
    RedactingFilter,
    clean_reason,
    digest_text,
    echo,
    raw_error_text,
    redact_secrets,
    redact_urls,
    redact_value,
)
from harness.servers import ThreadlessServer
from memories import services
from memories.models import Entry

pytestmark = pytest.mark.timeout(10)

MIB = 1 << 20
PROJECT_KEY = "tl_proj_" + "Q7wErT9yUi" + "Z" * 32
# Units that made the old patterns quadratic or worse, repeated up to 1 MiB.
UNITS = [
    "a-",
    "a.",
    "eyJ-",
    " ",
    '{"a":',
    "http://",
    "a",
    'File "',
    "at a(",
    "<",
    "<script>",
    "token ",
    "key=",
    "?key=",
    "a://b@",
    "1.1.1.1:",
    "a.B",
    "sk-",
    "\t\n",
    "Bearer ",
    "a/",
    "x" * 7 + ".",
    "[{",
]


def adversarial(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


attack = st.tuples(
    st.sampled_from(UNITS), st.integers(1, MIB), st.text(max_size=30), st.text(max_size=30)
).map(lambda t: t[2] + adversarial(t[0], t[1]) + t[3])


# --- the redaction functions, directly ---------------------------------------------------------


@pytest.mark.timeout(60)  # the whole property run; one example takes well under a second
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(attack)
def test_adversarial_text_up_to_a_mebibyte_goes_through_every_redaction_function(text):
    digest = digest_text("t", text)
    assert digest.startswith("Task 't' failed: ") and len(digest) <= DIGEST_LIMIT
    assert len(clean_reason(text)) <= 3 * 4_096  # cut to 4 KB; "[redacted]" can be longer than what it hides
    assert len(raw_error_text(text)) <= RAW_LIMIT + 400
    assert len(redact_secrets(text)) <= RAW_LIMIT + 1
    assert len(echo(text)) <= ECHO_LIMIT
    assert redact_value({"a": [text]})["a"][0] == redact_secrets(text)
    record = logging.LogRecord("t", logging.ERROR, __file__, 1, "failed: %s", (text,), None)
    RedactingFilter().filter(record)
    assert len(record.getMessage()) <= 3 * 16_384


@pytest.mark.timeout(60)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(UNITS), st.integers(1, 64 * 1024))
def test_the_patterns_themselves_take_adversarial_text_uncut(unit, size):
    # No cut in front: this is what the linear-time construction alone has to carry.
    text = adversarial(unit, size)
    assert len(redact_secrets(text, None)) >= 0
    assert len(clean_reason(text, None)) <= 3 * size + 20
    assert len(redact_urls(text)) >= 0


@pytest.mark.timeout(60)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(UNITS),
    st.integers(0, 2_000),
    st.sampled_from(
        [
            PROJECT_KEY,
            "sk-proj-abcdefghijklmnop1234",
            "tl_pub_" + "k" * 40,
            "Bearer abc.def-123_XYZ",
            "AIzaSyA1234567890abcdefghijklmnopqrstu",
        ]
    ),
)
def test_a_secret_after_adversarial_noise_is_still_redacted(unit, size, secret):
    text = adversarial(unit, size) + " " + secret + " tail"
    bare = secret.removeprefix("Bearer ")
    for out in (redact_secrets(text), raw_error_text(text), digest_text("t", text)):
        assert bare not in out


def test_deeply_nested_json_in_an_error_text_is_just_text():
    nested = '{"a":' * 3000 + "1" + "}" * 3000
    for text in (nested, '{"a":' * 3000, "Chat model execution failed: " + nested):
        assert digest_text("t", text).startswith("Task 't' failed: ")
        assert len(raw_error_text(text)) <= RAW_LIMIT + 400
    deep: dict = {}
    node = deep
    for _ in range(5000):
        node["a"] = {}
        node = node["a"]
    node["k"] = PROJECT_KEY
    walked = redact_value(deep)  # no RecursionError: the walker is iterative and depth-bounded
    assert PROJECT_KEY not in json.dumps(walked, check_circular=False)[:10_000]


# --- what redaction covers ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "api.internal.corp/v1/chat/completions",
        "10.0.0.5:11434/api/chat",
        "localhost:8080/v1/x",
        "https://bob:hunter2@host.example/v1/chat",
    ],
)
def test_a_url_with_or_without_a_scheme_becomes_url_in_the_digest(url):
    text = digest_text("eddi://ai.labs.llm", f"POST {url} failed")
    assert text == "Task 'eddi://ai.labs.llm' failed: POST [url] failed"


def test_a_bare_host_or_host_and_port_stays_in_the_digest():
    # The http_call digest names its host on purpose (SPEC 6.3).
    assert (
        digest_text("w", "API call to 127.0.0.1:8080 failed: HTTP 503")
        == "Task 'w' failed: API call to 127.0.0.1:8080 failed: HTTP 503"
    )
    assert clean_reason("API call to api.example.com failed") == "API call to api.example.com failed"


def test_url_credentials_never_reach_a_digest_a_raw_error_or_a_log():
    text = "GET https://bob:hunter2@pay.example.com/v1/charge failed"
    assert "hunter2" not in digest_text("t", text)
    raw = raw_error_text(text)
    assert "hunter2" not in raw and "bob" not in raw
    assert "https://[redacted]@pay.example.com/v1/charge" in raw
    assert "hunter2" not in redact_secrets(text)


@pytest.mark.parametrize(
    "query",
    [
        "?key=AIzaSyA1234567890abcdefghijklmnopqrstu",
        "?sig=c2lnbmF0dXJl",
        "?token=t0k3nvalue",
        "?x=1&signature=abcdef",
        "?X-Amz-Signature=ff00ff",
    ],
)
def test_key_like_query_values_are_redacted_everywhere(query):
    value = query.rsplit("=", 1)[1]
    text = f"GET https://maps.example.com/api/geo{query} → HTTP 403"
    for out in (redact_secrets(text), raw_error_text(text), digest_text("t", text)):
        assert value not in out


def test_the_raw_error_keeps_host_and_path_but_no_query_value():
    raw = raw_error_text("GET http://10.0.0.5:11434/api/chat?city=paris&units=metric#frag=x → HTTP 503")
    assert "http://10.0.0.5:11434/api/chat?city=[redacted]&units=[redacted]#frag=[redacted]" in raw
    scheme_less = raw_error_text("POST api.internal.corp/v1/chat/completions?api-version=2024 failed")
    assert "api.internal.corp/v1/chat/completions?api-version=[redacted]" in scheme_less


def test_the_logging_filter_redacts_userinfo_and_query_keys(caplog):
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter())
    logger = logging.getLogger("threadless.test.attack")
    logger.addHandler(handler)
    try:
        logger.error(
            "calling %s", "https://bob:hunter2@h.example/v1?key=AIzaSyA1234567890abcdefghijklmnopqrstu"
        )
    finally:
        logger.removeHandler(handler)
    assert "hunter2" not in stream.getvalue() and "AIzaSy" not in stream.getvalue()


def test_an_access_log_record_keeps_no_query_value():
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5", "GET", "/v1/events?key=abc&client_token=xyz&after=3", "1.1", 401),
        None,
    )
    RedactingFilter().filter(record)
    assert (
        record.getMessage()
        == '127.0.0.1:5 - "GET /v1/events?key=[redacted]&client_token=[redacted]&after=[redacted] HTTP/1.1" '
        "401"
    )


# --- the HTTP entry points (Django test client) -------------------------------------------------


def _error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content[:300]
    error = response.json()["error"]
    assert error["code"] == code
    return error


@pytest.mark.parametrize("unit", ["A-", "A.", "eyJ-", "A"])
def test_a_14_kb_method_name_is_a_short_405(db, client, unit):
    method = adversarial(unit, 14 * 1024)
    response = client.generic(method, "/v1/openapi.json")
    error = _error(response, 405, "method_not_allowed")
    assert len(error["message"]) <= 80
    assert error["message"].startswith("Method ") and method[:20].upper() in error["message"].upper()
    assert len(response.content) < 1_000


@pytest.mark.parametrize("unit", ["a-", "a.", "eyJ-", " "])
def test_an_8_kb_unknown_field_name_is_named_by_a_short_prefix(cast, unit):
    name = "x" + adversarial(unit, 8 * 1024)
    response = cast.a.post("/v1/memories", {name: 1}, format="json")
    error = _error(response, 400, "invalid_request")
    assert len(error["message"]) <= ECHO_LIMIT + 30
    assert error["message"].endswith(": unknown field.")


@pytest.mark.parametrize("unit", ["a-", "a.", "eyJ-", " ", "http://", '{"a":', "<"])
def test_a_16_kb_reported_error_is_accepted_and_its_texts_are_short_and_keyless(cast, unit):
    memory, _ = services.memory_create(project=cast.project_a)
    error_text = (
        adversarial(unit, 1024)
        + f" key {PROJECT_KEY} at https://bob:hunter2@h.example/x?sig=s1g "
        + adversarial(unit, 15 * 1024)
    )
    response = cast.a.post(
        f"/v1/memories/{memory.id}/report",
        {"messages": [], "failures": [{"task_id": "weather", "error": error_text}]},
        format="json",
    )
    assert response.status_code == 202, response.content[:300]
    [task_error] = response.json()["task_errors"]
    assert len(task_error["text"]) <= DIGEST_LIMIT and task_error["text"].startswith(
        "Task 'weather' failed: "
    )
    raw = Entry.objects.get(memory=memory, kind="error").content
    assert len(raw) <= RAW_LIMIT + 400
    for text in (task_error["text"], raw):
        assert PROJECT_KEY not in text and "hunter2" not in text and "s1g" not in text


def test_a_reported_error_of_3000_nested_objects_is_accepted_not_a_500(cast):
    memory, _ = services.memory_create(project=cast.project_a)
    response = cast.a.post(
        f"/v1/memories/{memory.id}/report",
        {"messages": [], "failures": [{"task_id": "t", "error": '{"a":' * 3000}]},
        format="json",
    )
    assert response.status_code == 202, response.content[:300]
    assert response.json()["task_errors"][0]["text"].startswith("Task 't' failed: {\"a\":")


@pytest.mark.parametrize("depth", [100, 1_500, 3_000])
def test_a_deeply_nested_body_is_a_400_invalid_request(cast, depth):
    memory, _ = services.memory_create(project=cast.project_a)
    body = '{"a":' * depth + "1" + "}" * depth
    for path in ("/v1/memories", f"/v1/memories/{memory.id}/report", f"/v1/memories/{memory.id}/decorate"):
        response = cast.a.post(path, data=body, content_type="application/json")
        _error(response, 400, "invalid_request")


def test_deep_output_of_a_reported_failure_is_a_400_not_a_500(cast):
    memory, _ = services.memory_create(project=cast.project_a)
    output: dict = {}
    node = output
    for _ in range(300):
        node["a"] = {}
        node = node["a"]
    body = json.dumps({"messages": [], "failures": [{"task_id": "t", "error": "x", "output": output}]})
    response = cast.a.post(f"/v1/memories/{memory.id}/report", data=body, content_type="application/json")
    _error(response, 400, "invalid_request")


# --- a real uvicorn process ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def uvicorn_info():
    """A real server at log level info (the level scripts/run.sh runs at), access log captured."""
    server = ThreadlessServer(env={"THREADLESS_RATE_LIMIT_PER_MINUTE": "0"}, log_level="info").start()
    yield server
    server.stop()


def _raw_request(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(data)
        chunks = []
        while True:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            chunks.append(chunk)
            if b"\r\n\r\n" in b"".join(chunks):
                head, _, rest = b"".join(chunks).partition(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":")[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length:")
                    ),
                    None,
                )
                if length is not None and len(rest) >= length:
                    break
        return b"".join(chunks)


@pytest.mark.live
@pytest.mark.timeout(180, func_only=False)
def test_a_14_kb_method_over_a_raw_socket_is_a_short_405_and_healthz_still_answers(uvicorn_info):
    method = adversarial("A-", 14 * 1024).encode()
    answers: dict = {}

    def health():
        answers["healthz"] = httpx.get(uvicorn_info.url + "/healthz", timeout=30).status_code

    thread = threading.Thread(target=health)
    thread.start()
    answer = _raw_request(
        uvicorn_info.port,
        method + b" /v1/openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
    )
    thread.join(30)
    head, _, body = answer.partition(b"\r\n\r\n")
    # uvicorn's httptools parser (installed for `make serve`) refuses such a request line itself
    # with a bare 400; with h11 it reaches the app, whose 405 must be short. Either way: fast,
    # and the method is never echoed back.
    status = head.split(b" ", 2)[1]
    assert status in (b"400", b"405"), head[:200]
    assert method[:64] not in answer
    if status == b"405":
        error = json.loads(body)["error"]
        assert error["code"] == "method_not_allowed" and len(error["message"]) <= 80
    assert answers["healthz"] == 200


@pytest.mark.live
@pytest.mark.timeout(180, func_only=False)
def test_the_access_log_of_a_real_uvicorn_keeps_no_key_nor_client_token(uvicorn_info):
    refused = "tl_proj_" + "R3fU5eD0nE" + "x" * 32
    publishable = "tl_pub_" + "PuB1iCkEy0" + "y" * 32
    token = "ct_" + "s3cr3tcl13nt" * 3
    with httpx.Client(base_url=uvicorn_info.url, timeout=30) as http:
        assert http.get("/v1/memories", params={"key": refused}).status_code == 401
        http.get(
            "/v1/conversations/cv_nope/turns/1/events", params={"key": publishable, "client_token": token}
        )
        http.get(
            "/v1/memories", params={"metadata.plan": "gold"}, headers={"Authorization": f"Bearer {refused}"}
        )
        # The access line is written after the response; a request after it flushes nothing but
        # gives the server a moment on a loaded machine.
        http.get("/healthz")
    log = ""
    for _ in range(100):
        log = (uvicorn_info.var / "web.log").read_text(errors="replace")
        if "/healthz" in log:
            break
        threading.Event().wait(0.1)
    assert '"GET /v1/memories?key=[redacted] HTTP/1.1" 401' in log
    assert "/turns/1/events?key=[redacted]&client_token=[redacted]" in log
    assert "metadata.plan=[redacted]" in log
    for secret in (refused, publishable, token, "R3fU5eD0nE", "PuB1iCkEy0", "s3cr3tcl13nt"):
        assert secret not in log


# --- the fact rules read end-user text too ------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "I like " + " " * 100_000 + "x",
        "I love " + "a-" * 50_000,
        "I like pizza" + " ," * 50_000 + "x",
        "I like pizza " + "but " * 25_000,
        # Each construct of the rules, repeated. "Oh and " x 70 took
        # 2^n steps before FILLER lost its composite alternatives ("oh and").
        "Oh and " * 70 + "I live in nowhere",
        "So about me, " * 35 + "I live in nowhere",
        "my dog " * 15_000,
        "We have two cats, " + "Ana, " * 20_000,
        "This is " * 15_000,
        "i " * 50_000,
        "I" + ", moved to" * 10_000,
        "I like pizza" + " — " * 30_000 + "x",
        "I like" + " " * 50_000 + "— I",
        "Name: " * 20_000,
        "my name is " * 10_000,
        "Heading to Rome" + " a" * 50_000,
        "It's " * 20_000 + "my name's not",
        "We have a dog." + " His name is" * 8_000,
        " 'a" * 33_000,
        '"a' * 50_000,
        "Me and my dog " * 8_000,
        "since 2020 " * 9_000 + "x",
        "I'm Ana, 3" + "1, " * 30_000,
        "My cat, a " * 10_000,
        "I work nights " * 8_000,
        # A statement before its question, emoji, labels, lists after "including".
        "I live in nowhere, is" * 5_000 + "?",
        "I live in nowhere" + ", any" * 20_000 + "?",
        "I'm a " + "\U0001f419 " * 30_000,
        "\u2764\ufe0f" * 40_000,
        "Background" + " for" * 20_000 + ": I'm",
        "I have " + "pets " * 20_000 + ", including a cat",
        "My dad, " * 12_000,
        "favorite band: " * 7_000,
        "not at Acme anymore, " * 5_000,
        "Nurse here " * 9_000,
        "I'm 34" + " and" * 25_000,
        "booked a week in " * 6_000,
        "i wrk at ikea as " * 6_000,
        "we got a puppy!! a " + "spaniel " * 12_000,
        "my job? " * 12_000,
        "my job? " + "tattoo " * 15_000,
        # Run-on dictation, self-description lists, lower-case messages,
        # chat tags, reported speech at the end, and each new rule family.
        "I'm a nurse " + "I live in " * 10_000,
        "x I'm" * 20_000,
        "I'm Ana, " + "a, " * 30_000,
        "I'm " + "3, " * 30_000,
        "i live in " * 10_000,
        "i work at a " * 8_000,
        "my daughter " * 8_000,
        "I like pizza" + " lol" * 20_000 + "x",
        "I like pizza" + " " * 50_000 + "btw x",
        "I'm five, " + "my " * 30_000 + "says",
        "We've just moved from " + "Oslo " * 20_000,
        "grew up on a " + "big " * 20_000 + "farm",
        "Oslo " * 20_000 + "born x",
        "we adopted a " + "dog " * 20_000 + "called",
        "I'm at " + "Acme " * 20_000 + "as a",
        "I'm at Acme, " + "the " * 20_000 + "team x",
        "glazier " * 20_000 + ".",
        "visiting my " + "old " * 20_000 + "friends in",
        "meet " * 20_000 + "Rex, my dog x",
        "ok " * 20_000 + "intro: I'm",
        "this is Ana, " * 10_000,
        "I'm a 45 year old " * 5_000,
        "booked " * 15_000,
        "I've been at Acme for " * 5_000,
        "my house is in " * 8_000,
        "Residing in Pune" * 6_000,
        "I work with " + "Acme " * 20_000,
        "I'm " + "Berlin " * 20_000 + "-based",
        "from " + "Ghana " * 20_000 + "originally x",
        "I'm in IT at " * 8_000,
        "Working as " * 10_000 + "is",
        "34 years old " * 8_000,
        "Age: " * 15_000,
        "I work as a " + "senior " * 15_000 + "at",
        "hi this is " * 10_000,
        "names " * 15_000,
        "Location: " * 10_000,
        "Allergies: " + "none " * 20_000,
        "x, Age: " * 10_000,
        "I work in a " + "big " * 20_000 + "as a",
        "I m " * 25_000,
        "Job: " + "head " * 20_000,
        "I'm staying in " * 8_000,
        "I'm Ana from " + "Oslo " * 20_000,
        "my manager at " + "Acme " * 20_000 + "x",
        "I'm a resident of " * 8_000,
        "Lagos based " * 10_000,
        "I grew up" + " and moved to" * 8_000,
        # Corrections, foreign introductions, and each new rule family.
        "wait no, " * 12_000,
        "actually no " * 10_000,
        "I mean I was " * 8_000,
        "well, worked " * 8_000,
        "plans changed, " * 7_000,
        "me llamo " * 10_000,
        "ich wohne in " * 8_000,
        "por aquí " * 10_000,
        "its Ana, not " * 8_000,
        "I, " * 30_000,
        "my real name is " * 8_000,
        "home is a " + "big " * 20_000 + "outside",
        "I'm a " + "tax " * 20_000 + "based in",
        "I got promoted to " * 6_000,
        "I fix " + "old " * 20_000 + "for a living",
        "I work on the " + "big " * 20_000 + "as a",
        "I've worked at Acme for " + "ten " * 20_000 + ", as a",
        "I'm with Acme, been there " * 5_000,
        "now at a " + "tiny " * 20_000 + "startup called",
        "employed by " * 10_000,
        "two kids, a boy called " * 5_000,
        "Rex (my " * 12_000,
        "nut " * 20_000 + "allergy",
        "vegan since " * 10_000,
        "I kinda " * 20_000 + "hate",
        "w/ " * 30_000,
        "w/" * 50_000,
        "the smell of " * 8_000,
        "fav band = " * 8_000,
        "live in " * 12_000,
        "28 yo " * 15_000,
        "a Glasgow " * 15_000 + "boy",
        ", now in " * 10_000,
        ", originally from " * 6_000,
        "my husbands name is " * 6_000,
        "ngl " * 25_000,
        "Dear Sir or Madam, " * 5_000,
        "here, " * 15_000,
        "45, " * 25_000,
        "4, a " * 20_000,
        "here, live in , " * 6_000,
        # Titles, spoken punctuation, "I'm in X, …", trades, sign-offs, accents
        # restored, foreign kin and origins, and each new rule family.
        "please just call me " * 6_000,
        "it's me " * 12_000,
        "hello it's " * 10_000,
        "I am writing as Mrs " * 5_000,
        "Dr. " * 25_000,
        "Dr. Ana " * 12_000,
        " comma" * 20_000,
        "a comma " * 12_000,
        "x full stop" * 9_000,
        "I'm in " + "Oslo " * 20_000 + ", x",
        "we're out in " * 8_000,
        "originally " * 12_000,
        "I come from a " + "small " * 20_000 + "village near",
        "by trade " * 12_000,
        "I drive a " * 10_000 + "bus for",
        "GIS " * 20_000 + "specialist at Acme",
        "I'm cabin " * 10_000,
        "I left Acme, now I'm at " * 4_000,
        "mi marido se llama " * 6_000,
        "First name: " * 9_000,
        " / " * 30_000,
        " | " * 30_000,
        "from Oslo, living in " * 5_000,
        "my family is from " * 6_000 + ", I was born there",
        "currently with " * 8_000,
        "Kind regards, " * 7_000,
        "Best, " * 15_000,
        "Ngozi is my name " * 6_000,
        "sorry I wrote " * 7_000 + "it's José",
        "it's Zoë " * 10_000,
        "jk " * 30_000,
        "namaste, " * 10_000,
        "n " * 40_000,
        "I have twin " * 9_000,
        "Casa do " * 12_000,
        "ich bin aus " * 8_000,
        "soy de nada pero vivo en " * 3_000,
        "I have a daughter, she's called " * 3_000,
        "got a new kitten last week, named her " * 2_500,
        "next month we fly to " * 5_000,
        "I've always loved " * 6_000,
        "I'm the " + "head " * 20_000 + "at Acme",
        "I manage a " * 9_000 + "team at",
        "born in 1988 in " * 6_000,
        "my job - " * 10_000,
        "I'm kind and " * 8_000,
        "home is a flat in " * 6_000 + "Oslo above",
        "said nobody, " * 8_000,
        "I'm Ana " * 12_000 + ", a",
        "I live on a " + "big " * 20_000 + "boat in",
        "As a " * 20_000 + ", I",
        "my day job is " * 7_000,
        ", said my " * 10_000,
        "Hi, I'm " + "Ana " * 20_000,
        "just kidding, " * 8_000,
        "not kidding " * 9_000,
        # Code-switched cues, work places, dash and bracket ends, trips, fans, profile
        # fields, pet emoji, corrections; "I'm at Acme, " took 8.6 s at 52 KB before each
        # rule's `needs` was read once per message instead of once per clause.
        "tôi là " * 14_000,
        "jina langu ni " * 7_000,
        "nazywam się " * 8_000,
        "Ana dw i " * 11_000,
        "Ana hapa " * 11_000,
        "shwmae, " * 12_000,
        "xin chào " * 10_000,
        "đang sống ở " * 8_000,
        "nasa " + "Oslo " * 20_000,
        "dito sa " * 12_000,
        "taga-" * 20_000,
        "lumaki ako sa " * 7_000,
        "nina miaka " * 9_000,
        "tuổi " * 20_000,
        "mam 3 " * 16_000,
        "Name's Ana - " * 7_000,
        "call me Ana (" * 7_000,
        "I go by Ana --" * 7_000,
        "I work at " + "big " * 20_000 + "in",
        "I fix " * 15_000 + "in Oslo x",
        "I'm a " + "hill " * 20_000 + "near",
        "I'm on a " + "strict " * 14_000 + "diet",
        "I'm a " + "huge " * 20_000 + "fan",
        "love: " + "a, " * 30_000,
        "hate: " * 15_000,
        "we're doing a " + "big " * 20_000 + "trip to",
        "I'm taking my " * 8_000 + "to",
        "I'm at Acme, " * 8_000,
        "I'm at Acme, designing " * 4_000,
        "I manage a " + "Acme " * 20_000 + "branch",
        "Oslo " * 20_000 + "girl through and through x",
        "I study " * 12_000,
        "originally from Oslo, been in " * 4_000,
        "meet " * 20_000 + "\U0001f436",
        "meet Ana " * 12_000 + "\U0001f436 x",
        "no sorry, " * 10_000,
        "x-- sorry, " * 9_000,
        "my nanay " * 11_000,
        "Maricel po, " * 9_000,
        "I can't stand " + "loud " * 20_000 + "in x",
        "I like a in a" + " in a" * 20_000 + "!",
        "I love x and " + "hate " * 20_000 + "!",
        ", vivo a " * 10_000,
        " und komme aus " * 7_000,
        "I love my " + "little " * 20_000 + "kids x",
        # Profile cards, work places, opening roles, code-switched cues (place first
        # too), kin named after, re-spelt pets, laughs, preference keys.
        "Ana, 34, " * 10_000,
        "this is Ana, " * 8_000,
        "Oslo originally, " * 6_000,
        "x (nurse) " * 10_000,
        "nurse with " * 10_000,
        "!?" * 30_000 + "lol",
        "_" * 60_000 + "haha",
        "I'm a nurse at Acme in " * 4_000,
        "in Oslo " * 12_000,
        "Oslo ni sunde " * 8_000,
        "Oslo mein rehta " * 7_000,
        "Oslo shusshin " * 8_000,
        "Oslo se " * 12_000,
        "ik ben " * 12_000,
        "3omri " * 15_000,
        "26 saal " * 12_000,
        "12-sai " * 12_000,
        "mijn hond " * 10_000,
        "meri wife " * 10_000,
        "mijn vrouw heet " * 6_000,
        "ik werk bij " * 9_000,
        "tenho um gato chamado " * 5_000,
        "Ana ni orukọ mi " * 6_000,
        "main Ana, " * 10_000,
        "my wife, her name is " * 5_000,
        "I married " * 10_000,
        "It's Ana, pronounced " * 5_000,
        "bee stings, " * 8_000 + "allergic",
        "I live on " * 10_000,
        "used to live in Oslo, now in " * 3_000,
        "I told you I live in Oslo but I meant " * 2_000,
        "... sorry, Ana " * 6_000,
        "I said " * 10_000 + "earlier",
        "I'm the only " * 8_000,
        "my son's name is Ana not " * 4_000,
        "Employer: Acme (" * 6_000,
        "I love " + "long " * 20_000 + "classes",
        "Dia dhuit, is mise " * 5_000,
        "our new house is in " * 5_000,
        "my address changed: " * 5_000,
        "I live up in " * 8_000,
        "I'm 25 f " * 10_000,
        "Ako po si " * 8_000,
        "annyeong haseyo~ " * 6_000,
        # Shouting, lower-case intros, cue lexicons of more languages, Turkish and
        # Hungarian suffixes, cards, signatures, bar lines, CV lines, forwarded mail.
        "HI IM " * 15_000,
        "im x " * 20_000,
        "hi im ana, " * 9_000,
        "my name is " * 9_000,
        "tinggal di " * 9_000,
        "jobber som fisker i " * 5_000,
        "arbeite als " * 8_000,
        "kerja di Acme sebagai " * 4_000,
        "soy x en " * 10_000,
        "faccio il " * 10_000,
        "Oslo'da " * 12_000,
        "Oslo'da x" * 10_000,
        "Osloben élek " * 7_000,
        "ani " * 25_000,
        "ben Ana " * 12_000,
        "bin 3 und " * 10_000,
        "sono vegan" * 10_000,
        "i bin der " * 9_000,
        "vivimos en " * 9_000,
        "mi esposo y yo vivimos en " * 3_000,
        "Kakak saya " * 9_000,
        "-" * 100_000 + "x",
        "From: x\n" * 12_000,
        "Ana Souza | " * 8_000,
        "29F | " * 16_000,
        "x\n" * 50_000,
        "Best,\n" * 14_000,
        "Nurse, Acme (2019 " * 5_000,
        "dog mum to Ana and " * 5_000,
        "love " * 20_000,
        "love love " * 10_000,
        "we adopted a dog, she's called " * 3_000,
        "I've got a wife " * 6_000,
        "used to live in Oslo, now back home in " * 2_000,
        "trip to Oslo next " * 5_000,
        "joining as a " * 8_000,
        "my role as " * 9_000,
        "my employer, " * 8_000,
        "34, married to the " * 5_000,
        "Ana, 34, 2 sons Ana and " * 4_000,
        "Ana, 34, Oslo based, " * 4_000,
        "Bursa'da öğretmen" * 6_000,
        "Szegeden " * 10_000,
        "Dhaka te " * 11_000,
        "Chennai la " * 9_000,
        "dar Shiraz " * 9_000,
        "Bilbon bizi " * 8_000,
        "two cats (Ana and " * 5_000,
        "with a cat named " * 6_000,
        "Bio: 34. " * 10_000,
        "x. " * 30_000,
        "ek werk as 'n " * 7_000,
        # English families (engaged, kin before "and I", lower-case ages, nationalities,
        # for uni, retraining / joining as, favourites with no verb, titled relatives, vehicles).
        "got engaged to " * 8_000,
        "hubby Ana and " * 8_000,
        "im 38 " * 16_000,
        "I'm a Ghanaian " * 7_000,
        "I'm in Oslo for " * 7_000,
        ", now retraining as a " * 5_000,
        "joining the x squad as " * 5_000,
        "fav colour " * 9_000,
        "fav colour the, " * 6_000,
        "my mum, Mrs " * 9_000,
        "I drive a lorry " * 7_000,
        "based out of " * 8_000,
        "love it, hate it, " * 6_000,
        "our two cats are " * 6_000,
        "I run a small " * 8_000,
        "bro " * 25_000,
    ],
)
def test_100_kb_of_adversarial_user_text_does_not_stall_the_fact_rules(text):
    from factrules import UserMessage, extract

    assert extract([UserMessage(entry_id=1, seq=1, text=text)]) == []
    [found] = extract([UserMessage(entry_id=2, seq=2, text=text[:50_000] + ". I like pizza.")])
    assert found.text == "User likes pizza"


@pytest.mark.parametrize(
    "unit",
    [
        "I'm 35, wait no, 3",
        "wait no ",
        "I live in Oslo, actually no, ",
        "I work at Acme. Well, worked. ",
        "x, I mean I was, ",
        "update: plans changed, it's ",
        "I'm 35, just kidding, 3",
        "allergic to kiwi... wait no, it's ",
        "I work at Acme, scratch that, I moved to ",
        "I'm from Oslo... no sorry, from ",
        "I said I'm 4 earlier, I meant ",
        "my dog is Rex... sorry, ",
        "I live in Oslo but I meant ",
    ],
)
def test_a_message_full_of_corrections_costs_a_few_passes_not_one_per_marker(unit):
    """A correction inside a message ("I'm 35, wait no, 36") re-reads parts of that message,
    at most three plain passes whatever the number of markers (no pass corrects again), and only up
    to MAX_CORRECTED characters; a longer message is read as it is."""
    from factrules import MAX_CORRECTED, UserMessage, extract

    text = (unit * (MAX_CORRECTED // len(unit)))[:MAX_CORRECTED]
    found = extract([UserMessage(entry_id=1, seq=1, text=text)])
    assert len({(c.slot, c.text) for c in found}) == len(found)  # the same fact once per message


def test_no_filler_word_is_two_others_in_a_row():
    """FILLER opens every fact rule: an alternative that is two others in a row ("oh and" = "oh" +
    "and") lets a run of them be read 2^n ways, each retried when the rule after it fails."""
    import itertools
    import re

    from factrules import FILLER

    alternatives = re.search(r"\(\?i:(.*?)\)\)\s*\[", FILLER, re.DOTALL).group(1).split("|")
    plain = {a for a in alternatives if re.fullmatch(r"[a-z ]+", a)}
    assert len(plain) > 40
    assert not {f"{a} {b}" for a, b in itertools.product(plain, repeat=2)} & plain


def test_a_message_of_5000_statements_gives_5000_facts_without_stalling():
    """The rules say each fact once per message: the check is a set, not a scan of what was found
    (quadratic in the facts of one message)."""
    from factrules import UserMessage, extract

    text = " ".join(f"I like thing{i}." for i in range(5_000)) + " I like thing0."
    found = extract([UserMessage(entry_id=1, seq=1, text=text)])
    assert len(found) == 5_000
    assert {c.text for c in found} == {f"User likes thing{i}" for i in range(5_000)}


@pytest.mark.parametrize("name", ["uvicorn.access", "uvicorn.error", "_granian", "granian.access"])
def test_the_web_servers_loggers_write_through_the_redacting_handler(name):
    writers = [h for h in logging.getLogger(name).handlers if type(h) is logging.StreamHandler]  # noqa: E721
    assert writers, name  # (pytest adds its capture handlers beside them)
    assert all(any(isinstance(f, RedactingFilter) for f in h.filters) for h in writers), name
