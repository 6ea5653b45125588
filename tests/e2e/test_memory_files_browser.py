"""A memory's Files tab in Chromium: the notes the memory tool wrote, their versions and who wrote them."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e


def test_the_files_tab_shows_a_note_and_its_earlier_version(staff_page, console_server, seeded):
    with console_server.client() as api:
        for command in [
            {
                "command": "create",
                "path": "/memories/trip/oslo.md",
                "file_text": "Dates: March\n<b>Hotel</b>: ?\n",
            },
            {
                "command": "str_replace",
                "path": "/memories/trip/oslo.md",
                "old_str": "?",
                "new_str": "near the fjord",
            },
        ]:
            assert (
                api.post(f"/memories/{seeded.memory_id}/files/command", json=command).json()["is_error"]
                is False
            )
    staff_page.goto(console_server.url + f"/manage/memories/{seeded.memory_id}/")
    staff_page.get_by_role("link", name="Files").click()
    files = staff_page.get_by_role("region", name="Files under /memories")
    expect(files).to_contain_text("/memories/trip/")
    expect(files).not_to_contain_text("near the fjord")  # contents are read one at a time, when opened
    staff_page.get_by_role("link", name="/memories/trip/oslo.md").click()
    expect(files).to_contain_text("<b>Hotel</b>: near the fjord")  # shown as text, not markup
    staff_page.get_by_role("link", name="Version 1").click()
    expect(files).to_contain_text("<b>Hotel</b>: ?")
    expect(files).not_to_contain_text("near the fjord")
    assert "tab=files" in staff_page.url and "version=" in staff_page.url
