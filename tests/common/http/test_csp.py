"""The HTML pages' Content-Security-Policy (common.http.csp): on every page, strict, and one the
templates can keep (the browser side: tests/e2e/test_console_browser.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client

ROOT = Path(__file__).resolve().parents[3]

# What a strict policy without 'unsafe-inline' refuses to run or apply.
INLINE = {
    "inline script": re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE),
    "style attribute": re.compile(r"<[a-z][^>]*\sstyle=", re.IGNORECASE),
    "style element": re.compile(r"<style\b", re.IGNORECASE),
    "event handler attribute": re.compile(r"<[a-z][^>]*\son[a-z]+=", re.IGNORECASE),
    "javascript: URL": re.compile(r"javascript:", re.IGNORECASE),
    "htmx evaluated attribute": re.compile(r"\shx-on[:-]|\shx-vals=['\"]js:", re.IGNORECASE),
}


def _directives(header: str) -> dict[str, str]:
    return {part.split()[0]: part.strip() for part in header.split(";") if part.strip()}


@pytest.mark.django_db
def test_every_html_page_carries_a_strict_policy(cast):
    staff = Client()
    staff.force_login(cast.staff)
    pages = {
        "home": Client().get("/"),
        "sign-in": Client().get("/manage/login/"),
        "console": staff.get("/manage/"),
        "agents": staff.get("/manage/agents/"),
        "proxy": staff.get("/manage/proxy/"),
        "not found": staff.get("/manage/no/such/page/"),
        "admin": staff.get("/admin/login/"),
    }
    for name, page in pages.items():
        assert page["Content-Type"].startswith("text/html"), name
        policy = _directives(page["Content-Security-Policy"])
        assert policy["default-src"] == "default-src 'self'", name
        assert policy["script-src"] == "script-src 'self'", name
        assert policy["style-src"] == "style-src 'self'", name
        assert policy["object-src"] == "object-src 'none'", name
        assert policy["frame-ancestors"] == "frame-ancestors 'none'", name
        assert "unsafe" not in page["Content-Security-Policy"], name


@pytest.mark.django_db
def test_json_answers_and_the_api_reference_carry_none(cast):
    assert "Content-Security-Policy" not in cast.a.get("/v1/memories")
    assert "Content-Security-Policy" not in Client().get("/v1/docs")  # Redoc starts with an inline script


def test_no_template_has_anything_inline_the_policy_refuses():
    found = []
    paths = sorted(ROOT.glob("*/templates/**/*.html"))
    assert paths, "no template found"
    for path in paths:
        text = path.read_text()
        for what, pattern in INLINE.items():
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{path.relative_to(ROOT)}:{line}: {what}")
    assert found == []
