"""A memory's search box and the Manager chat's focus, by keyboard, at every width the layout
tests use: search, reach the best hit with Tab, open it at its message in the timeline; open the
Manager chat and type at once."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .layout import WIDTHS

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def searchable(console_server) -> str:
    """A memory of three exchanges, indexed for search (the server runs no worker: its background
    work is done here)."""
    with console_server.client() as api:
        memory_id = api.post("/memories", json={"external_id": "search-e2e"}).json()["id"]
        for user, reply in [
            ("Hi! I'm planning a trip to Oslo in March.", "Lovely, Oslo in March is crisp."),
            ("Then suggest three museums.", "The Munch Museum, the Viking Ship Museum, the National Museum."),
            ("And a place for dinner?", "Try Maaemo."),
        ]:
            api.post(
                f"/memories/{memory_id}/decorate", json={"messages": [{"role": "user", "content": user}]}
            ).raise_for_status()
            api.post(
                f"/memories/{memory_id}/report", json={"messages": [{"role": "assistant", "content": reply}]}
            ).raise_for_status()
    console_server.manage(
        "shell",
        "-c",
        "from memories.models import Outbox\nfrom memories.services import outbox_process\n"
        f"for row in Outbox.objects.filter(memory_id={memory_id!r}, processed_at=None): "
        "outbox_process(outbox_id=row.id)",
    )
    return memory_id


def _sign_in(page, server) -> None:
    page.goto(server.url + "/manage/login/")
    page.get_by_label("Username").fill(server.demo["username"])
    page.get_by_label("Password").fill(server.demo["password"])
    page.keyboard.press("Enter")
    page.wait_for_url(server.url + "/manage/")


@pytest.mark.parametrize("width", WIDTHS)
def test_search_a_memory_and_chat_by_keyboard(browser, console_server, searchable, width):
    context = browser.new_context(viewport={"width": width, "height": 800})
    page = context.new_page()
    _sign_in(page, console_server)

    page.goto(console_server.url + f"/manage/memories/{searchable}/")
    box = page.get_by_role("searchbox", name="Search this memory's messages")
    box.focus()
    page.keyboard.type("museums")
    page.keyboard.press("Enter")
    heading = page.get_by_role("heading", name="Messages matching “museums”")
    expect(heading).to_be_focused()
    expect(page).to_have_url(re.compile(r"tab=search&q=museums"))
    expect(box).to_have_value("museums")
    expect(page.locator(".search-hits li").first).to_contain_text("three museums")
    page.keyboard.press("Tab")
    best = page.locator(".search-hits a").first
    expect(best).to_be_focused()
    seq = re.search(r"#(\d+)", best.inner_text()).group(1)
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"tab=timeline.*#entry-{seq}$"))
    expect(page.locator(f"#entry-{seq}")).to_be_in_viewport()

    page.goto(console_server.url + f"/manage/agents/{console_server.demo['agent_id']}/chat/")
    expect(page.get_by_role("button", name="Start a new conversation")).to_be_focused()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"\?c=conv_"))
    expect(page.get_by_label("Message")).to_be_focused()
    page.keyboard.type("Hello there")
    page.keyboard.press("Enter")
    expect(page.locator(".msg-assistant").last).to_contain_text("[demo model] You said: “Hello there”")
    expect(page.get_by_label("Message")).to_be_focused()
    context.close()
