"""The console's proxy page in Chromium: a staff member stores an upstream for a project."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e


def test_staff_store_an_openai_upstream_and_see_the_key_only_as_stored(staff_page, console_server):
    staff_page.get_by_role("link", name="Proxy").click()
    expect(staff_page.get_by_role("heading", name="Proxy upstreams")).to_be_visible()
    openai = staff_page.get_by_role("region", name="OpenAI")
    openai.get_by_label("Upstream base URL").fill("https://gateway.example.com/v1")
    openai.get_by_label("Upstream API key").fill("sk-browser-secret-1234")
    openai.get_by_role("button", name="Save OpenAI upstream").click()
    expect(staff_page.get_by_role("status").or_(staff_page.locator(".notice")).first).to_contain_text("saved")
    openai = staff_page.get_by_role("region", name="OpenAI")
    expect(openai).to_contain_text("https://gateway.example.com/v1")
    expect(openai).to_contain_text("stored")
    assert "sk-browser-secret-1234" not in staff_page.content()
    staff_page.set_viewport_size({"width": 390, "height": 900})
    staff_page.screenshot(path=str(console_server.var / "proxy-phone.png"), full_page=True)


def test_a_bad_base_url_is_shown_next_to_the_form(staff_page, console_server):
    staff_page.goto(console_server.url + "/manage/proxy/")
    anthropic = staff_page.get_by_role("region", name="Anthropic")
    anthropic.get_by_label("Upstream base URL").fill("ftp://files.example.com")
    anthropic.get_by_role("button", name="Save Anthropic upstream").click()
    expect(staff_page.get_by_role("region", name="Anthropic").get_by_role("alert")).to_contain_text("http")
