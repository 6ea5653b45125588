"""docs/tuning/ stays short and names only what the code still has.

Each page records the decisions in force; a setting, constant or file it names that the code no
longer defines means the page describes code that is gone.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs" / "tuning").glob("*.md"))
MAX_LINES = 250  # a page read in one sitting
SKIP = {".venv", "node_modules", "tests", "var", ".git"}

SETTING = re.compile(r"\bTHREADLESS_[A-Z0-9_]*[A-Z0-9]\b")
CONSTANT = re.compile(r"`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)`")  # `NAME_WITH_UNDERSCORE` alone in backticks
PATH = re.compile(r"`((?:[\w.-]+/)+[\w.-]*)`")  # `dir/`, `dir/file.py`, relative to the repository
# `NAME = …`, `NAME: type = …`, `A, B = …` at the start of a line (a module's or a class's)
ASSIGNED = re.compile(
    r"^[ \t]*((?:[A-Z][A-Z0-9_]*[ \t]*,[ \t]*)*[A-Z][A-Z0-9_]*)[ \t]*(?::[^=\n]*)?=(?!=)", re.M
)
QUOTED = re.compile(r"[\"']([A-Z][A-Z0-9_]*)[\"']")
LINK = re.compile(r"\]\(([^)\s:]+?)(?:#([\w-]+))?\)")  # a relative Markdown link and its anchor


def _code_names() -> set[str]:
    """Upper-case names the code assigns (module or class level) or reads by name (a quoted
    string, as the settings and environment reads do), in every Python file outside the tests,
    plus the Makefile and scripts."""
    names: set[str] = set()
    files = [p for p in ROOT.rglob("*.py") if not SKIP & set(p.relative_to(ROOT).parts)]
    for path in files:
        text = path.read_text(encoding="utf-8")
        for group in ASSIGNED.findall(text):
            names |= {name.strip() for name in group.split(",")}
        names |= set(QUOTED.findall(text))
    for path in [ROOT / "Makefile", *sorted((ROOT / "scripts").glob("*"))]:
        if path.is_file():
            names |= set(SETTING.findall(path.read_text(encoding="utf-8")))
    return names


@pytest.fixture(scope="module")
def code_names() -> set[str]:
    return _code_names()


def test_there_are_tuning_pages():
    assert len(PAGES) >= 3


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_tuning_page_reads_in_one_sitting(page):
    assert len(page.read_text(encoding="utf-8").splitlines()) <= MAX_LINES


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_tuning_page_names_only_settings_and_constants_the_code_defines(page, code_names):
    text = page.read_text(encoding="utf-8")
    named = set(SETTING.findall(text)) | set(CONSTANT.findall(text))
    assert sorted(named - code_names) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_tuning_page_names_only_files_that_exist(page):
    text = page.read_text(encoding="utf-8")
    missing = [p for p in PATH.findall(text) if not (ROOT / p).exists()]
    assert missing == []


def _slugs(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.M)
    return {re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-") for h in headings}


def test_links_to_and_from_the_tuning_pages_reach_a_page_and_its_heading():
    linking = [*PAGES, ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *ROOT.glob("*/README.md")]
    broken = []
    for page in linking:
        for target, anchor in LINK.findall(page.read_text(encoding="utf-8")):
            path = (page.parent / target).resolve()
            if page in PAGES or "tuning/" in target:
                if not path.exists() or (anchor and anchor not in _slugs(path)):
                    broken.append(f"{page.relative_to(ROOT)}: {target}#{anchor}")
    assert broken == []


def test_the_name_checks_see_what_is_gone():
    page = "`RECALL_SKIP_REPEATS` and THREADLESS_NOT_A_SETTING=1 in `memories/recall.py`"
    assert CONSTANT.findall(page) == ["RECALL_SKIP_REPEATS"]
    assert SETTING.findall(page) == ["THREADLESS_NOT_A_SETTING"]
    assert PATH.findall(page) == ["memories/recall.py"]
    assert LINK.findall("[a](tuning/x.md#y-z) [b](https://e.org)") == [("tuning/x.md", "y-z")]
    assert ASSIGNED.findall("A_B, C_D = 1, 2\nclass X:\n    E_F: int = 3\nG_H == 4\n") == ["A_B, C_D", "E_F"]
