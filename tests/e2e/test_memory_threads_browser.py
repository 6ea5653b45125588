"""A memory's threads in Chromium at a phone's width and a desktop's: the Threads tab (its table
scrolls inside a box that shows it does), a thread's timeline chosen with the keyboard and kept in
the URL, and a fact's link to the message it was learned from."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

HISTORY = {
    "trip-planning": [
        {
            "role": "user",
            "content": "Hi, I'm Dana. I live in Lisbon.",
            "created_at": "2025-03-01T09:30:00+00:00",
        },
        {"role": "assistant", "content": "Hello Dana!", "created_at": "2025-03-01T09:31:00+00:00"},
    ],
    "ticket-981": [
        {
            "role": "user",
            "content": "My order 5521 arrived broken.",
            "created_at": "2025-04-02T10:00:00+00:00",
        },
    ],
}


@dataclass
class Threaded:
    memory_id: str


@pytest.fixture(scope="module")
def threaded(console_server) -> Threaded:
    """A memory with a turn in its default thread and two imported threads, its facts extracted."""
    with console_server.client() as api:
        memory_id = api.post("/memories", json={"external_id": "dana-threads"}).json()["id"]
        api.post(
            f"/memories/{memory_id}/decorate", json={"messages": [{"role": "user", "content": "Hello again"}]}
        ).raise_for_status()
        for thread, messages in HISTORY.items():
            api.post(
                f"/memories/{memory_id}/messages", json={"thread": thread, "messages": messages}
            ).raise_for_status()
    # The server runs no worker here: do the background work (fact extraction) of this memory now.
    console_server.manage(
        "shell",
        "-c",
        "from memories.models import Outbox\nfrom memories.services import outbox_process\n"
        f"for row in Outbox.objects.filter(memory_id={memory_id!r}, processed_at=None): "
        "outbox_process(outbox_id=row.id)",
    )
    return Threaded(memory_id=memory_id)


def sign_in(page, server) -> None:
    page.goto(server.url + "/manage/login/")
    page.get_by_label("Username").fill(server.demo["username"])
    page.get_by_label("Password").fill(server.demo["password"])
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(server.url + "/manage/")


def page_width(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth")


@pytest.mark.parametrize("width", [375, 1280])
def test_threads_their_timelines_and_a_facts_source_by_keyboard(browser, console_server, threaded, width):
    context = browser.new_context(viewport={"width": width, "height": 800})
    page = context.new_page()
    sign_in(page, console_server)
    page.goto(console_server.url + f"/manage/memories/{threaded.memory_id}/")
    page.get_by_role("link", name="Threads (3)").click()
    table = page.get_by_role("region", name="Threads table")
    expect(table.get_by_role("row")).to_have_count(4)  # the header and three threads
    expect(table.get_by_role("row").nth(1)).to_contain_text("default")  # newest activity first
    expect(table.get_by_role("row").nth(3)).to_contain_text("trip-planning")
    expect(table.get_by_role("row").nth(3)).to_contain_text("2025-03-01 09:31")
    assert page_width(page) <= width
    if width < 700:  # the table scrolls in its box, which says so and which Tab reaches
        expect(table).to_have_attribute("data-overflow", "start")
        note = table.evaluate("el => getComputedStyle(el, '::before').content")
        assert "Scroll sideways" in note
        page.get_by_role("link", name="What the model sees").focus()  # the control before the table
        page.keyboard.press("Tab")
        expect(table).to_be_focused()
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        expect(table).to_have_attribute("data-overflow", re.compile("middle|end"))
        assert table.evaluate("el => el.scrollLeft") > 0
    else:
        expect(table).not_to_have_attribute("data-overflow", re.compile(".*"))

    table.get_by_role("link", name="trip-planning").click()
    expect(page.get_by_text("Hi, I'm Dana. I live in Lisbon.")).to_be_visible()
    expect(page.get_by_text("Hello again")).to_have_count(0)
    expect(page.get_by_label("Thread", exact=True)).to_have_value("trip-planning")
    assert "thread=trip-planning" in page.url

    # Another thread, with the keyboard only: the choice lands in the URL.
    page.get_by_label("Thread", exact=True).focus()
    page.get_by_label("Thread", exact=True).select_option("ticket-981")
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Show thread")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_text("My order 5521 arrived broken.")).to_be_visible()
    page.wait_for_url(re.compile(r"thread=ticket-981"))
    assert page_width(page) <= width
    page.reload()
    expect(page.get_by_label("Thread", exact=True)).to_have_value("ticket-981")

    page.get_by_role("link", name="Facts").click()
    source = page.locator(".fact-sources").filter(has_text="thread trip-planning")
    expect(source.first).to_contain_text("said 2025-03-01")
    assert page_width(page) <= width
    source.first.get_by_role("link", name=re.compile(r"message #\d+")).click()
    page.wait_for_url(re.compile(r"thread=trip-planning.*#entry-\d+"))
    target = page.locator(".entry:target")
    expect(target).to_contain_text("I live in Lisbon.")
    expect(target).to_be_in_viewport()
    context.close()
