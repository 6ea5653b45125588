"""Every console page and the end-user chat at 320, 375, 768 and 1280 px, filled with wide data
(long ids and names, long digests, many rows): nothing may reach past the viewport, no column or
button breaks a short word, no text renders below 10 px, at 320 px every text box and select keeps
at least 60 % of the width, all text meets WCAG AA contrast, and every control Tab reaches shows a
focus ring of at least 3:1."""

from __future__ import annotations

import pytest

from .chat_seed import FlakyProvider
from .layout import (
    BROKEN_WORDS_JS,
    CONTRAST_JS,
    FOCUS_RING_JS,
    MEASURE_JS,
    NARROW_JS,
    TINY_TEXT_JS,
    WIDTHS,
    seed_wide,
)

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def wide(console_server):
    provider = FlakyProvider()
    yield seed_wide(console_server, provider_url=provider.url)
    provider.close()


def _problems(page, url: str, width: int) -> list[str]:
    page.goto(url)
    page.wait_for_load_state("networkidle")
    found = page.evaluate(MEASURE_JS)
    out = [f"{o['el']} spans {o['left']}..{o['right']} px ({o['text']!r})" for o in found["offenders"]]
    if found["scroll"] > width:
        out.append(f"the page scrolls sideways: {found['scroll']} px wide")
    out += [f"{b['el']} breaks the word {b['word']!r}" for b in page.evaluate(BROKEN_WORDS_JS, 16)]
    out += [f"{t['el']} ({t['text']!r}) is {t['size']} px" for t in page.evaluate(TINY_TEXT_JS, 10)]
    if width == 320:
        out += [f"#{n['el']} is only {n['width']} px wide" for n in page.evaluate(NARROW_JS, 0.6)]
    if width == 1280:  # colours do not change with the width
        out += [f"{c['el']} ({c['text']!r}) has contrast {c['ratio']}:1" for c in page.evaluate(CONTRAST_JS)]
        out += _focus_problems(page)
    return out


def _focus_problems(page, stops: int = 40) -> list[str]:
    """Tab from the top of the page through its first `stops` controls; each must show a ring."""
    page.evaluate("() => { document.activeElement && document.activeElement.blur(); }")
    out, reached = [], 0
    for _ in range(stops):
        page.keyboard.press("Tab")
        ring = page.evaluate(FOCUS_RING_JS)
        if ring is None:
            continue
        reached += 1
        if ring["ratio"] < 3:
            out.append(f"the focus ring of {ring['el']!r} has contrast {ring['ratio']}:1")
    if reached == 0:
        out.append("Tab reaches no control")
    return out[:5]


@pytest.mark.parametrize("width", WIDTHS)
def test_no_page_is_wider_than_the_viewport(browser, console_server, wide, width):
    context = browser.new_context(viewport={"width": width, "height": 800})
    page = context.new_page()
    failures = {}
    for name, path in (("home", "/"), ("login", "/manage/login/")):
        failures[name] = _problems(page, console_server.url + path, width)
    page.get_by_label("Username").fill(console_server.demo["username"])
    page.get_by_label("Password").fill(console_server.demo["password"])
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(console_server.url + "/manage/")
    for name, path in wide.pages.items():
        failures[name] = _problems(page, console_server.url + path, width)
    context.close()
    failures = {name: found for name, found in failures.items() if found}
    assert failures == {}, f"at {width} px: {failures}"
