"""Take screenshots of every console and chat page at desktop and phone widths.

    .venv/bin/python scripts/console_screenshots.py      # writes docs/screenshots/*.png

Starts a real Threadless server (own database), seeds it through the API, signs in as the demo
staff user and visits each page in Chromium.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

from playwright.sync_api import sync_playwright  # noqa: E402

from harness.servers import ThreadlessServer  # noqa: E402
from tests.e2e.conftest import CHROMIUM_ARGS  # noqa: E402
from tests.e2e.seed import seed_memory  # noqa: E402

OUT = ROOT / "docs" / "screenshots"
SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 375, "height": 760}}


def pages(server, seeded, extra: dict) -> list[tuple[str, str, callable | None]]:
    mem = f"/manage/memories/{seeded.memory_id}/"
    out = [
        ("login", "/manage/login/", None),
        ("overview", "/manage/", None),
        ("projects", "/manage/projects/", None),
        ("project-keys", f"/manage/projects/{seeded.project_id}/", None),
        ("memories", "/manage/memories/", None),
        (
            "memory-timeline",
            mem + "#turn-2",
            lambda p: p.get_by_role("button", name="Task weather failed", exact=False).first.click(),
        ),
        ("memory-facts", mem + "?tab=facts", None),
        (
            "memory-files",
            mem + "?tab=files",
            lambda p: p.get_by_text("/memories/trip/oslo.md").first.click(),
        ),
        ("memory-model", mem + "?tab=model", None),
        ("memory-search", mem + "?tab=search&q=museums", None),
        ("digests", "/manage/digests/", None),
        ("proxy", "/manage/proxy/", None),
    ]
    return out + (extra.get("pages") or [("agents", "/manage/agents/", None)])


def seed_files(server, memory_id: str) -> None:
    """A note the memory tool wrote and then edited, for the Files tab."""
    with server.client() as api:
        for command in [
            {"command": "create", "path": "/memories/trip/oslo.md", "file_text": "Dates: March\nHotel: ?\n"},
            {
                "command": "str_replace",
                "path": "/memories/trip/oslo.md",
                "old_str": "?",
                "new_str": "near the fjord",
            },
        ]:
            api.post(f"/memories/{memory_id}/files/command", json=command).raise_for_status()


def seed_tool_call(server, memory_id: str) -> None:
    """A turn where the model called a tool, for the timeline's tool-call arguments."""
    call = {
        "id": "call_weather_1",
        "type": "function",
        "function": {
            "name": "get_weather",
            "arguments": '{"city": "Oslo", "month": "March", "units": "metric"}',
        },
    }
    with server.client() as api:
        api.post(
            f"/memories/{memory_id}/decorate",
            json={"messages": [{"role": "user", "content": "How cold is Oslo in March?"}]},
        ).raise_for_status()
        api.post(
            f"/memories/{memory_id}/report",
            json={
                "messages": [
                    {"role": "assistant", "content": "", "tool_calls": [call]},
                    {"role": "tool", "tool_call_id": "call_weather_1", "content": '{"low": -4, "high": 3}'},
                    {"role": "assistant", "content": "Between -4 and 3 °C: bring a warm coat."},
                ]
            },
        ).raise_for_status()


def index_memory(server, memory_id: str) -> None:
    """The server runs no worker: do the memory's background work (search index, facts) now."""
    server.manage(
        "shell",
        "-c",
        "from memories.models import Outbox\nfrom memories.services import outbox_process\n"
        f"for row in Outbox.objects.filter(memory_id={memory_id!r}, processed_at=None): "
        "outbox_process(outbox_id=row.id)",
    )


def seed_demo_chat(server) -> str:
    """A Manager chat with the demo agent that shows memory at work: a fact told, the worker's
    extraction, then a question the reply answers from it. Returns the page's path."""
    agent_id = server.demo["agent_id"]
    with server.client() as api:
        conv = api.post(f"/agents/{agent_id}/conversations", json={}).json()
        say = f"/conversations/{conv['id']}/say"
        api.post(say, json={"input": "Hi, I'm Dana and my dog is called Biscuit."}).raise_for_status()
        index_memory(server, conv["memoryId"])
        api.post(say, json={"input": "What is my dog called?"}).raise_for_status()
    return f"/manage/agents/{agent_id}/chat/?c={conv['id']}"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with ThreadlessServer(env={"THREADLESS_EGRESS_ALLOW": "127.0.0.1"}) as server, sync_playwright() as pw:
        seeded = seed_memory(server)
        seed_files(server, seeded.memory_id)
        seed_tool_call(server, seeded.memory_id)
        index_memory(server, seeded.memory_id)
        demo_chat = seed_demo_chat(server)
        extra: dict = {}
        try:
            from tests.e2e.chat_seed import screenshot_pages  # the agents part, when present

            extra["pages"] = screenshot_pages(server)
        except ImportError:
            pass
        server.extra_env = {}
        extra.setdefault("pages", [("agents", "/manage/agents/", None)])
        extra["pages"].append(("manager-chat-demo", demo_chat, None))
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        for size_name, viewport in SIZES.items():
            context = browser.new_context(viewport=viewport, device_scale_factor=1)
            page = context.new_page()
            for name, path, action in pages(server, seeded, extra):
                if name == "login":
                    page.goto(server.url + "/")
                    page.screenshot(path=str(OUT / f"home-{size_name}.png"), full_page=True)
                    page.goto(server.url + path)
                    page.screenshot(path=str(OUT / f"{name}-{size_name}.png"), full_page=True)
                    page.get_by_label("Username").fill(server.demo["username"])
                    page.get_by_label("Password").fill(server.demo["password"])
                    page.get_by_role("button", name="Sign in").click()
                    page.wait_for_url(server.url + "/manage/")
                    continue
                page.goto(server.url + path)
                if action:
                    action(page)
                page.wait_for_timeout(150)
                # Full page: a phone screenshot clipped to the viewport would hide a page that overflows.
                page.screenshot(path=str(OUT / f"{name}-{size_name}.png"), full_page=True)
            context.close()
        browser.close()
    print("screenshots written to", OUT)


if __name__ == "__main__":
    main()
