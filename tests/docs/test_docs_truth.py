"""The docs' checkable claims hold: settings documented, the reading order's files, no private imports.

In the spirit of datasette's tests/test_docs.py: each test fails when the code and a page part ways.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("common", "projects", "providers", "webhooks", "memories", "chat", "proxy", "console", "serving",
           "threadless_site")  # fmt: skip
# The rule-based fact extractor's modules share `_` names among themselves; the package is on its way
# out of the service into a library of its own, whose public surface will be decided there.
LEAVING = ROOT / "memories" / "facts" / "rules"
SETTING_READ = re.compile(r"\benv(?:str|bool|int|float|list|keylist)\(\s*\"(THREADLESS_[A-Z0-9_]+)\"")
ENVIRON_READ = re.compile(r"\bos\.(?:environ\.get\(|environ\[|getenv\()\s*\"(THREADLESS_[A-Z0-9_]+)\"")


def _settings_table() -> set[str]:
    """The names in the first column of docs/deployment.md's settings table."""
    page = (ROOT / "docs" / "deployment.md").read_text()
    section = page.split("## Settings (environment variables)", 1)[1].split("\n## ", 1)[0]
    firsts = re.findall(r"^\| ([^|]+) \|", section, re.MULTILINE)
    return {name for cell in firsts for name in re.findall(r"`(THREADLESS_[A-Z0-9_]+)`", cell)}


def _product_files():
    for package in PRODUCT:
        for path in sorted((ROOT / package).rglob("*.py")):
            if not path.is_relative_to(LEAVING):
                yield path


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
    rules = "memories/facts/rules/"  # "`pipeline.py` and `registry.py`" are that package's
    missing = [n for n in named if not (ROOT / n).exists() and not (ROOT / rules / n).exists()]
    assert missing == []


def _crossings(source: str) -> list[str]:
    """`from x import _name`, `import x._y` and `module._name` of an imported module, by line."""
    tree = ast.parse(source)
    private = re.compile(r"^_(?!_)")
    found, modules = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            parts = [*(node.module or "").split("."), *(a.name for a in node.names)]
            if any(private.match(part) for part in parts):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
            if node.level or (node.module or "").split(".")[0] in PRODUCT:
                modules |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if any(private.match(part) for part in alias.name.split(".")):
                    found.append(f"{node.lineno}: {ast.unparse(node)}")
                if alias.name.split(".")[0] in PRODUCT:
                    modules.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        # `_meta` is Django's public model API despite its underscore.
        if isinstance(node, ast.Attribute) and private.match(node.attr) and node.attr != "_meta":
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in modules:
                found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_module_takes_another_modules_private_name():
    crossings = [
        f"{path.relative_to(ROOT)}:{crossing}"
        for path in _product_files()
        for crossing in _crossings(path.read_text())
    ]
    assert crossings == []


def test_the_private_name_check_sees_each_form():
    source = "from memories.api import hot\nfrom memories.context import _in_window\nimport memories._x\n"
    source += "hot._y\n"
    assert [line.split(":")[0] for line in _crossings(source)] == ["2", "3", "4"]
    assert _crossings("from memories.models import Entry\nEntry._meta\n") == []
