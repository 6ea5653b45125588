"""Browser tests: Chromium (the OS package) driven by Playwright against a REAL uvicorn server.

Run in their own pytest invocation (`pytest -m e2e`): Playwright's sync API and the asyncio
tests cannot share one event loop.
"""

from __future__ import annotations

import os

import pytest

from harness.servers import ThreadlessServer

from .seed import seed_memory

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": "/usr/bin/chromium", "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def console_server():
    # The stub model provider listens on loopback, which the egress policy refuses by default.
    server = ThreadlessServer(env={"THREADLESS_EGRESS_ALLOW": "127.0.0.1"}).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def seeded(console_server):
    return seed_memory(console_server)


@pytest.fixture
def staff_page(page, console_server):
    """A browser page signed in to the Manager console as the demo staff user."""
    page.goto(console_server.url + "/manage/login/")
    page.get_by_label("Username").fill(console_server.demo["username"])
    page.get_by_label("Password").fill(console_server.demo["password"])
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(console_server.url + "/manage/")
    return page
