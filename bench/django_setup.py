"""The one place a benchmark process sets Django up.

    from bench.django_setup import setup
    setup(var_dir=..., sqlite=True, migrate=True, THREADLESS_RATE_LIMIT_PER_MINUTE="0")

Keyword arguments in capitals are environment variables set before the settings are read.
`var_dir` gives the process its own THREADLESS_VAR_DIR (the SQLite file, the counter files);
`sqlite=True` drops DATABASE_URL so the embedded default is used; `migrate=True` brings that
database's schema up to date. The orchestrators (`bench.run`, `bench.load`, `bench.reliability`)
never call it: they start servers and child processes, each of which sets itself up.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = "threadless_site.settings"


def setup(
    *, var_dir: str | Path | None = None, sqlite: bool = False, migrate: bool = False, **env: str
) -> None:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    if var_dir is not None:
        os.environ["THREADLESS_VAR_DIR"] = str(var_dir)
    if sqlite:
        os.environ.pop("DATABASE_URL", None)
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", SETTINGS)
    import django

    django.setup()
    if migrate:
        from django.core.management import call_command

        call_command("migrate", verbosity=0, interactive=False)
