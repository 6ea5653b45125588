"""The docs' checkable claims hold: settings documented, the reading order's files, no private imports.

In the spirit of datasette's tests/test_docs.py: each test fails when the code and a page part ways.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("common", "projects", "providers", "webhooks", "memories", "chat", "proxy", "console", "serving",
           "threadless_site")  # fmt: skip

SETTING_READ = re.compile(r"\benv(?:str|bool|int|float|list|keylist)\(\s*\"(THREADLESS_[A-Z0-9_]+)\"")
ENVIRON_READ = re.compile(r"\bos\.(?:environ\.get\(|environ\[|getenv\()\s*\"(THREADLESS_[A-Z0-9_]+)\"")


def _script(name: str):
    """A module of scripts/ (not a package: `make lint` runs them as files)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


private_names = _script("private_names")


def _settings_table() -> set[str]:
    """The names in the first column of docs/deployment.md's settings table."""
    page = (ROOT / "docs" / "deployment.md").read_text()
    section = page.split("## Settings (environment variables)", 1)[1].split("\n## ", 1)[0]
    firsts = re.findall(r"^\| ([^|]+) \|", section, re.MULTILINE)
    return {name for cell in firsts for name in re.findall(r"`(THREADLESS_[A-Z0-9_]+)`", cell)}


def _product_files():
    for package in PRODUCT:
        yield from sorted((ROOT / package).rglob("*.py"))


def test_every_threadless_setting_the_code_reads_is_in_the_settings_table_and_back():
    read = set(SETTING_READ.findall((ROOT / "threadless_site" / "settings.py").read_text()))
    for path in _product_files():
        read |= set(ENVIRON_READ.findall(path.read_text()))
    launched = "\n".join(p.read_text() for p in [ROOT / "Makefile", *sorted((ROOT / "scripts").glob("*.sh"))])
    documented = _settings_table()
    assert read - documented == set()
    assert {name for name in documented - read if name not in launched} == set()


def test_the_files_of_the_reading_order_exist():
    page = (ROOT / "docs" / "architecture.md").read_text()
    section = page.split("## Reading the code for the first time", 1)[1].split("\n## ", 1)[0]
    named = re.findall(r"`([\w/]+(?:\.py|/))`", section)
    assert len(named) >= 5
    rules = "extractor/factrules/"  # "`pipeline.py` and `registry.py`" are that package's
    missing = [n for n in named if not (ROOT / n).exists() and not (ROOT / rules / n).exists()]
    assert missing == []


def test_no_module_takes_another_modules_private_name():
    checked = set(private_names.checked_files())
    assert ROOT / "extractor" / "factrules" / "pipeline.py" in checked
    assert set(_product_files()) <= checked
    assert private_names.all_crossings() == []


def test_the_private_name_check_sees_each_form():
    source = "from memories.api import hot\nfrom memories.context import _in_window\nimport memories._x\n"
    source += "hot._y\n"
    assert [line.split(":")[0] for line in private_names.crossings(source)] == ["2", "3", "4"]
    assert private_names.crossings("from memories.models import Entry\nEntry._meta\n") == []
