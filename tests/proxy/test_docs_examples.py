"""The proxy examples in docs/proxy.md and docs/integrations.md run as written against a live
server whose project's proxy settings point at the stub upstream."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
# A fenced block right after an "<!-- example: name -->" marker (bounded, linear-time pattern).
BLOCK = re.compile(r"<!-- example: ([a-z-]+) -->\n```([a-z]+)\n(.*?)\n```", re.DOTALL)


def example(page: str, name: str) -> str:
    return {n: code for n, _lang, code in BLOCK.findall((DOCS / page).read_text())}[name]


@pytest.fixture
def stub_upstream_settings(live, upstream):
    with live.client() as http:
        answer = http.put(
            "/proxy/settings/openai", json={"base_url": upstream.openai_url, "api_key": "sk-stub"}
        )
        assert answer.status_code == 200, answer.text
        yield
        http.put("/proxy/settings/openai", json={"base_url": None, "api_key": None})


@pytest.mark.parametrize(
    "page, name, answers, expected",
    [
        (
            "proxy.md",
            "responses",
            ["Hello Ana!", "You are Ana.", "Bye Ana."],
            ["Hello Ana!", "You are Ana.", "Bye Ana."],
        ),
        (
            "proxy.md",
            "conversations",
            ["Lovely, May is warm."],
            [
                "Lovely, May is warm.",
                "[\"I'm planning a trip to Lisbon.\", 'In May.', 'Lovely, May is warm.']",
                "True",
            ],
        ),
        (
            "integrations.md",
            "agents-proxy",
            [("get_weather", {"city": "Paris"}), None, "You're welcome."],
            [
                "The tool said: 21 °C and sunny in Paris",
                "You're welcome.",
                "True ['message', 'function_call', 'function_call_output', 'message', 'message', 'message']",
            ],
        ),
    ],
)
def test_the_example_runs_and_prints_what_the_page_promises(
    live, upstream, stub_upstream_settings, tmp_path, page, name, answers, expected
):
    for answer in answers:
        if isinstance(answer, tuple):
            upstream.push(tool=answer)
        elif answer is not None:
            upstream.push(text=answer)
        else:
            upstream.push()  # the stub's default: it answers with the tool's output
    script = tmp_path / f"example_{name.replace('-', '_')}.py"
    script.write_text(example(page, name))
    env = {**os.environ, "THREADLESS_API_KEY": live.key, "THREADLESS_BASE_URL": live.url}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == expected
    assert all(r.headers["authorization"] == "Bearer sk-stub" for r in upstream.requests)
