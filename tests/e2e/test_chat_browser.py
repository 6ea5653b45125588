"""Agents in Chromium: the config editor, the Manager chat and the end-user chat."""

from __future__ import annotations

import json
import re
import secrets

import httpx
import pytest
from playwright.sync_api import expect

from .chat_seed import PROVIDER_TEXT, FlakyProvider, agent_config, create_agent, publishable_key

pytestmark = pytest.mark.e2e

RAW_REASON = f"Task 'eddi://ai.labs.llm' failed: Streaming chat failed: {PROVIDER_TEXT}"


@pytest.fixture(scope="module")
def provider():
    stub = FlakyProvider()
    yield stub
    stub.close()


@pytest.fixture(scope="module")
def agent(console_server, provider):
    # A fresh slug each time: pytest may set this fixture up again for the non-browser test.
    return create_agent(
        console_server,
        name="Travel helper",
        slug=f"travel-helper-{secrets.token_hex(3)}",
        config=agent_config(provider.url, origins=["https://shop.example"]),
    )


@pytest.fixture(scope="module")
def pub_key(console_server, agent):
    return publishable_key(console_server, slug=agent["slug"])


def test_the_config_editor_shows_an_error_at_its_json_path(staff_page, console_server, agent):
    staff_page.goto(console_server.url + "/manage/agents/")
    row = staff_page.get_by_role("row").filter(has_text=agent["slug"])
    row.get_by_role("link", name="Edit config of Travel helper").click()
    editor = staff_page.get_by_label("Configuration (JSON)")
    config = editor.input_value().replace('"provider": "openai"', '"provider": "openia"')
    editor.fill(config)
    staff_page.get_by_role("button", name="Save config").click()
    alert = staff_page.get_by_role("alert")
    expect(alert).to_contain_text("At workflow[0].provider:")
    expect(alert.locator("code")).to_have_text("workflow[0].provider")
    expect(editor).to_have_attribute("aria-invalid", "true")
    editor.fill("{ not json")
    staff_page.get_by_role("button", name="Save config").click()
    expect(staff_page.get_by_role("alert")).to_contain_text("line 1, column 3")


def test_manager_chat_shows_the_raw_reason_of_a_failed_turn(staff_page, console_server, agent, provider):
    provider.fail()
    staff_page.goto(console_server.url + f"/manage/agents/{agent['id']}/chat/")
    staff_page.get_by_role("button", name="Start a new conversation").click()
    staff_page.get_by_label("Message").fill("What's the weather in Oslo?")
    staff_page.get_by_role("button", name="Send").click()
    error = staff_page.locator(".msg-error").last
    expect(error).to_contain_text(RAW_REASON)
    expect(error).to_contain_text("task ai.labs.llm")
    expect(error).to_contain_text("provider")
    expect(error).to_contain_text("turn 1 · Failed")  # the state in words, streamed...
    # After a reload the page renders the same failure from the stored turn.
    staff_page.reload()
    expect(staff_page.locator(".msg-error").last).to_contain_text(RAW_REASON)
    expect(staff_page.locator(".msg-error").last).to_contain_text("turn 1 · Failed")  # ...and stored
    # Fixed provider: running the turn again streams the reply in place.
    provider.heal()
    staff_page.get_by_role("button", name="Run last turn again").click()
    expect(staff_page.locator(".msg-assistant").last).to_have_text(re.compile("Hello from the stub."))


def test_end_user_chat_shows_the_banner_and_try_again_recovers(
    browser, console_server, agent, provider, pub_key
):
    provider.fail()
    context = browser.new_context(viewport={"width": 375, "height": 720})
    page = context.new_page()
    bodies: list[bytes] = []
    page.on(
        "requestfinished",
        lambda request: bodies.append(request.response().body() if request.response() else b""),
    )
    page.goto(console_server.url + f"/chat/{agent['slug']}/#key={pub_key}")
    page.get_by_label("Your message").fill("Is it cold in Oslo?")
    page.get_by_role("button", name="Send").click()
    banner = page.get_by_role("alert")
    expect(banner).to_contain_text("Something went wrong")
    try_again = page.get_by_role("button", name="Try again")
    expect(try_again).to_be_focused()
    html = page.content()
    assert "deprecated" not in html and "Streaming chat failed" not in html
    try_again.click()  # still failing: the banner says the retry ran
    expect(banner).to_contain_text("Something went wrong again (tried 2 times")
    expect(try_again).to_be_focused()
    provider.heal()
    try_again.click()
    expect(page.locator(".msg-assistant").last).to_have_text(re.compile("Hello from the stub."))
    expect(banner).to_be_hidden()
    page.wait_for_timeout(200)
    assert page.context.cookies() == []
    assert bodies, "no network responses were seen"
    for body in bodies:
        assert b"deprecated" not in body and b"Streaming chat failed" not in body
    context.close()


def test_a_stream_failing_midway_takes_its_partial_reply_off_the_end_user_page(
    browser, console_server, agent, provider, pub_key
):
    """A streamed failure: the rollback reaches the page, and the banner replaces the partial tokens."""
    error = json.dumps({"error": {"message": PROVIDER_TEXT}})
    provider.stub.openai_stream(
        "/v1/chat/completions",
        ["Partial ", "forecast ", "for Oslo"],
        chunk_delay=0.4,
        tail=[f"data: {error}\n\n"],
    )
    page = browser.new_page()
    bodies: list[bytes] = []
    page.on(
        "requestfinished",
        lambda request: bodies.append(request.response().body() if request.response() else b""),
    )
    page.goto(console_server.url + f"/chat/{agent['slug']}/#key={pub_key}")
    page.get_by_label("Your message").fill("Forecast for Oslo?")
    page.get_by_role("button", name="Send").click()
    # The tokens stream in first…
    expect(page.locator(".msg-assistant").last).to_contain_text("Partial forecast")
    # …then the task fails: the banner shows and the partial reply is gone.
    expect(page.get_by_role("alert")).to_contain_text("Something went wrong")
    expect(page.locator(".msg-assistant")).to_have_count(0)
    assert "Partial forecast" not in page.locator("#chat-log").inner_text()
    page.wait_for_timeout(200)
    assert any(b"event: rollback" in body for body in bodies), "the rollback event did not reach the page"
    provider.heal()
    page.get_by_role("button", name="Try again").click()
    expect(page.locator(".msg-assistant").last).to_have_text(re.compile("Hello from the stub."))
    page.close()


def test_try_again_with_nothing_to_retry_says_so(browser, console_server, agent, provider, pub_key):
    provider.fail()
    page = browser.new_page()
    page.goto(console_server.url + f"/chat/{agent['slug']}/#key={pub_key}")
    page.get_by_label("Your message").fill("Hello?")
    page.get_by_role("button", name="Send").click()
    expect(page.get_by_role("alert")).to_contain_text("Something went wrong")
    provider.heal()
    # The turn is rerun elsewhere (another tab) before this page's Try again.
    status = page.evaluate("""async () => {
        const agent = document.getElementById('widget').dataset.agentId;
        const conv = JSON.parse(sessionStorage.getItem('threadless:' + agent));
        const key = new URLSearchParams(location.hash.slice(1)).get('key');
        const r = await fetch('/v1/conversations/' + conv.id + '/rerun', {method: 'POST', body: '{}',
            headers: {'Authorization': 'Bearer ' + key, 'X-Client-Token': conv.clientToken,
                      'Content-Type': 'application/json', 'Accept': 'text/event-stream'}});
        return r.status + ' ' + await r.text();
    }""")
    assert status.startswith("200") and '"conversationState":"READY"' in status, status
    page.get_by_role("button", name="Try again").click()
    expect(page.get_by_role("alert")).to_contain_text("nothing to retry")
    expect(page.get_by_role("button", name="Try again")).to_be_hidden()
    page.close()


def test_a_script_in_a_message_renders_as_text_in_the_end_user_chat(
    browser, console_server, agent, provider, pub_key
):
    provider.heal()
    page = browser.new_page()
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(console_server.url + f"/chat/{agent['slug']}/#key={pub_key}")
    page.get_by_label("Your message").fill("<script>alert(1)</script><img src=x onerror=alert(2)>")
    page.get_by_role("button", name="Send").click()
    expect(page.locator(".msg-user").last).to_have_text(re.compile(re.escape("<script>alert(1)</script>")))
    expect(page.locator(".msg-assistant").last).to_have_text(re.compile("Hello from the stub."))
    assert dialogs == []
    assert page.locator(".msg-user img").count() == 0
    page.close()


def test_only_the_agents_origins_may_frame_the_chat(console_server, agent):
    chat = httpx.get(console_server.url + f"/chat/{agent['slug']}/")
    assert "frame-ancestors https://shop.example" in chat.headers["Content-Security-Policy"]
    assert "X-Frame-Options" not in chat.headers
    assert "set-cookie" not in chat.headers
    assert PROVIDER_TEXT not in chat.text
    console = httpx.get(console_server.url + "/manage/login/")
    assert console.headers["X-Frame-Options"] == "DENY"
    assert httpx.get(console_server.url + "/chat/no-such-agent/").status_code == 404


def test_the_embed_script_shows_the_chat_in_an_iframe_on_an_allowed_site(browser, console_server, provider):
    """A page on another origin (the stub server) embeds the widget with threadless-widget.js."""
    site = provider.url
    embedded = create_agent(
        console_server,
        name="Shop helper",
        slug=f"shop-helper-{secrets.token_hex(3)}",
        config=agent_config(provider.url, origins=[site]),
    )
    key = publishable_key(console_server, slug=embedded["slug"])
    provider.stub.set(
        "/shop",
        content_type="text/html",
        text=(
            "<!doctype html><html><body><h1>Shop</h1>"
            f'<script src="{console_server.url}/static/threadless-widget.js" data-agent="{embedded["slug"]}" '
            f'data-key="{key}" data-title="Chat with us"></script></body></html>'
        ),
    )
    provider.heal()
    page = browser.new_page()
    page.goto(site + "/shop")
    page.get_by_role("button", name="Chat with us").click()
    chat = page.frame_locator("iframe[title='Chat with us']")
    chat.get_by_label("Your message").fill("Do you ship to Oslo?")
    chat.get_by_role("button", name="Send").click()
    expect(chat.locator(".msg-assistant").last).to_have_text(re.compile("Hello from the stub."))
    page.close()
