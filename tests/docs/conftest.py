"""The docs tests' shared fixture: the TypeScript SDK built from the current sources."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

SDK = Path(__file__).resolve().parents[2] / "sdk" / "typescript"


def _newest(paths) -> float:
    return max((p.stat().st_mtime for p in paths), default=0.0)


@pytest.fixture(scope="session")
def typescript_sdk() -> Path:
    """sdk/typescript with its locked dependencies installed and `dist/` built from the current source."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("Node.js (node, npm) is not installed")
    installed = SDK / "node_modules" / ".package-lock.json"
    if not installed.exists() or installed.stat().st_mtime < (SDK / "package-lock.json").stat().st_mtime:
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"], cwd=SDK, check=True, capture_output=True, timeout=600
        )
    built = [SDK / "dist" / "index.js", SDK / "dist" / "integrations" / "anthropic.js"]
    if not all(p.exists() for p in built) or _newest(built) < _newest((SDK / "src").rglob("*.ts")):
        subprocess.run(["npm", "run", "build"], cwd=SDK, check=True, capture_output=True, timeout=600)
    return SDK
