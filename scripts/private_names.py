"""No module takes another module's private name: `from x import _name`, `import x._y` and `module._name`
of an imported module, in the service's packages and the fact extractor's (factrules). A leading `_`
means "not for other modules"; a name two modules share is public, or lives in a module both import.

    .venv/bin/python scripts/private_names.py    # lists each crossing; exit status 1 if there is one

`make lint` runs it; tests/docs/test_docs_truth.py runs the same check.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVICE = ("common", "projects", "providers", "webhooks", "memories", "chat", "proxy", "console", "serving",
           "threadless_site")  # fmt: skip
# Each checked package by its import name, and the folder its modules are in.
PACKAGES = {**{name: ROOT / name for name in SERVICE}, "factrules": ROOT / "extractor" / "factrules"}
PRIVATE = re.compile(r"^_(?!_)")


def crossings(source: str) -> list[str]:
    """`from x import _name`, `import x._y` and `module._name` of an imported module, by line."""
    tree = ast.parse(source)
    found, modules = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            parts = [*(node.module or "").split("."), *(a.name for a in node.names)]
            if any(PRIVATE.match(part) for part in parts):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
            if node.level or (node.module or "").split(".")[0] in PACKAGES:
                modules |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if any(PRIVATE.match(part) for part in alias.name.split(".")):
                    found.append(f"{node.lineno}: {ast.unparse(node)}")
                if alias.name.split(".")[0] in PACKAGES:
                    modules.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        # `_meta` is Django's public model API despite its underscore.
        if isinstance(node, ast.Attribute) and PRIVATE.match(node.attr) and node.attr != "_meta":
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in modules:
                found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def checked_files() -> list[Path]:
    return [path for folder in PACKAGES.values() for path in sorted(folder.rglob("*.py"))]


def all_crossings() -> list[str]:
    """Every crossing of every checked file, as `path:line: statement`."""
    return [
        f"{path.relative_to(ROOT)}:{crossing}"
        for path in checked_files()
        for crossing in crossings(path.read_text())
    ]


def main() -> int:
    found = all_crossings()
    print("\n".join(found) or f"no private name crosses a module ({len(checked_files())} files)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
