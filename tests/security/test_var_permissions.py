"""The var dir is private to the account running Threadless: another local user can read neither
the database (sessions included), demo.json (the admin password and a project key in clear),
the key files nor the broker's messages, and cannot open the writers' lock files to stall writes.

Real processes: `manage.py migrate`, `bootstrap_demo` and a Celery message sent to the embedded
filesystem broker, in a fresh var dir; then every path under it is checked."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _manage(var: Path, *args: str) -> str:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "THREADLESS_COUNTERS_PATH")
    }
    env.update(THREADLESS_VAR_DIR=str(var), DJANGO_SETTINGS_MODULE="threadless_site.settings")
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _loose(var: Path) -> list[str]:
    """Paths under `var` (and `var` itself) that anyone but the owner may use."""
    found = []
    for path in [var, *var.rglob("*")]:
        if path.is_symlink():
            continue
        mode = stat.S_IMODE(path.lstat().st_mode)
        if mode & 0o077:
            found.append(f"{path.relative_to(var.parent)} {oct(mode)}")
    return found


@pytest.mark.skipif(os.environ.get("DATABASE_URL", "").startswith("postgres"), reason="the embedded default")
def test_a_fresh_install_keeps_every_file_under_var_private(tmp_path):
    var = tmp_path / "var"
    _manage(var, "migrate", "--noinput", "-v0")
    _manage(var, "bootstrap_demo", "--json")
    _manage(var, "shell", "-c", "from threadless_site.celery import app; app.send_task('threadless.probe')")
    assert (var / "demo.json").exists() and any(var.rglob("*.sqlite3"))
    assert any(p.is_file() for p in (var / "broker").rglob("*")), "the broker holds the sent message"
    assert _loose(var) == []


@pytest.mark.skipif(os.environ.get("DATABASE_URL", "").startswith("postgres"), reason="the embedded default")
def test_an_older_install_with_readable_files_is_tightened_at_start(tmp_path):
    var = tmp_path / "var"
    var.mkdir(mode=0o755)
    demo = var / "demo.json"
    demo.write_text('{"password": "hunter2"}')
    demo.chmod(0o644)
    (var / "broker").mkdir(mode=0o755)
    var.chmod(0o755)
    _manage(var, "check")
    assert stat.S_IMODE(var.stat().st_mode) == 0o700
    assert stat.S_IMODE(demo.stat().st_mode) == 0o600
    assert stat.S_IMODE((var / "broker").stat().st_mode) == 0o700
