"""The Manager console in Chromium: what a staff member sees and clicks."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e


def test_login_lands_on_the_overview(staff_page):
    expect(staff_page.get_by_role("heading", name="Overview")).to_be_visible()
    expect(staff_page.get_by_role("link", name="Overview")).to_have_attribute("aria-current", "page")


def test_a_wrong_password_is_refused(page, console_server):
    page.goto(console_server.url + "/manage/login/")
    page.get_by_label("Username").fill(console_server.demo["username"])
    page.get_by_label("Password").fill("wrong")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("correct username and password")


def test_create_a_key_and_see_it_once(staff_page, console_server):
    staff_page.goto(console_server.url + f"/manage/projects/{console_server.demo['project_id']}/")
    staff_page.get_by_label("Label").fill("e2e backend")
    staff_page.get_by_role("button", name="Create key").click()
    box = staff_page.locator("#new-key")
    expect(box).to_be_visible()
    plaintext = box.input_value()
    assert plaintext.startswith("tl_proj_")
    expect(staff_page.get_by_text("only time it is shown")).to_be_visible()
    staff_page.get_by_role("button", name="Copy").click()
    expect(staff_page.locator("#new-key-status")).to_have_text("Copied to the clipboard.")
    # The key works against the API...
    with console_server.client(plaintext) as api:
        assert api.get("/memories").status_code == 200
    # ...and is never shown again.
    staff_page.reload()
    expect(staff_page.locator("#new-key")).to_have_count(0)
    assert plaintext not in staff_page.content()
    row = staff_page.get_by_role("row").filter(has_text="e2e backend")
    expect(row).to_contain_text(plaintext[:18])
    staff_page.once("dialog", lambda dialog: dialog.accept())
    row.get_by_role("button", name=re.compile("Revoke")).click()
    expect(staff_page.get_by_role("row").filter(has_text="e2e backend")).to_contain_text("revoked")
    with console_server.client(plaintext) as api:
        assert api.get("/memories").status_code == 401


def test_open_a_memory_and_expand_its_error_digest(staff_page, console_server, seeded):
    staff_page.goto(console_server.url + "/manage/memories/")
    staff_page.get_by_label("Search").fill("customer-42")
    staff_page.get_by_role("link", name=seeded.memory_id).click()
    expect(staff_page.get_by_role("heading", name="Turn 2")).to_be_visible()
    hidden = staff_page.locator(".entry.uncommitted")
    expect(hidden.first).to_contain_text("hidden from the model")
    toggle = staff_page.get_by_role("button", name=re.compile("Task weather failed"))
    expect(toggle).to_have_attribute("aria-expanded", "false")
    panel = staff_page.locator("#" + toggle.get_attribute("aria-controls"))
    expect(panel).to_be_hidden()
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(panel).to_be_visible()
    expect(toggle).to_contain_text("Task 'eddi://weather' failed")  # a short digest text: in the button only
    expect(panel).not_to_contain_text("Task 'eddi://weather' failed")
    expect(panel).to_contain_text("com.example.weather.Client.fetch")  # the raw error, for staff
    toggle.press("Enter")
    expect(panel).to_be_hidden()


def test_a_script_in_a_message_renders_as_text(staff_page, console_server, seeded):
    dialogs = []
    staff_page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    staff_page.goto(console_server.url + f"/manage/memories/{seeded.memory_id}/")
    expect(
        staff_page.get_by_text("<script>alert('x')</script> Can you check the weather there?")
    ).to_be_visible()
    assert dialogs == []


def test_what_the_model_sees_and_facts_tabs(staff_page, console_server, seeded):
    staff_page.goto(console_server.url + f"/manage/memories/{seeded.memory_id}/")
    staff_page.get_by_role("link", name="What the model sees").click()
    expect(staff_page.get_by_role("heading", name="Instructions (system prompt)")).to_be_visible()
    expect(staff_page.get_by_role("region", name="Instructions (system prompt)")).to_contain_text(
        "You are a friendly travel assistant."
    )
    assert "tab=model" in staff_page.url
    staff_page.get_by_role("link", name="Facts").click()
    staff_page.get_by_label("New fact").fill("The user prefers trains.")
    staff_page.get_by_role("button", name="Add fact").click()
    expect(staff_page.get_by_text("Fact added.")).to_be_visible()
    expect(staff_page.get_by_label("Fact text").first).to_have_value("The user prefers trains.")


def test_phone_width_and_keyboard_only(browser, console_server, seeded):
    context = browser.new_context(viewport={"width": 375, "height": 800})
    page = context.new_page()
    page.goto(console_server.url + "/manage/login/")
    # The username field has focus on load (autofocus); wait for it before typing, a busy
    # machine can apply autofocus a moment after the load event.
    expect(page.get_by_label("Username")).to_be_focused()
    page.keyboard.type(console_server.demo["username"])
    page.keyboard.press("Tab")
    page.keyboard.type(console_server.demo["password"])
    page.keyboard.press("Enter")
    page.wait_for_url(console_server.url + "/manage/")
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    page.goto(console_server.url + f"/manage/memories/{seeded.memory_id}/")
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    toggle = page.get_by_role("button", name=re.compile("Task weather failed"))
    for _ in range(60):
        page.keyboard.press("Tab")
        if toggle.evaluate("el => el === document.activeElement"):
            break
    else:
        pytest.fail("the digest toggle is not reachable by Tab")
    page.keyboard.press("Space")
    expect(toggle).to_have_attribute("aria-expanded", "true")
    context.close()


def test_the_pages_keep_to_their_content_security_policy(staff_page, console_server, seeded):
    """Every page is sent with the policy, and nothing on it (markup, htmx, the console's
    scripts) needs an inline script, an inline style or eval: Chromium reports no violation."""
    violations = []
    staff_page.on(
        "console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None
    )
    base = console_server.url
    memory = f"/manage/memories/{seeded.memory_id}/"
    for path in (
        "/manage/",
        "/manage/digests/",
        "/manage/agents/",
        "/manage/proxy/",
        memory,
        memory + "?tab=model",
    ):
        answer = staff_page.goto(base + path)
        assert "script-src 'self'" in answer.headers["content-security-policy"], path
        staff_page.wait_for_load_state("networkidle")
    staff_page.goto(base + "/manage/memories/")
    staff_page.get_by_label("Search").fill("customer-42")  # htmx swaps the results in
    expect(staff_page.get_by_role("link", name=seeded.memory_id)).to_be_visible()
    staff_page.goto(base + f"/manage/projects/{console_server.demo['project_id']}/")
    staff_page.get_by_label("Label").fill("e2e policy")
    staff_page.get_by_role("button", name="Create key").click()
    box = staff_page.locator("#new-key")
    box.focus()  # selects the whole key for copying (console.js, no inline handler)
    assert box.evaluate("el => [el.selectionStart, el.selectionEnd]") == [0, len(box.input_value())]
    assert violations == []
