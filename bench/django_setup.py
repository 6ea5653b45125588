"""The one place a benchmark process sets Django up.

    from bench.django_setup import setup
    setup(var_dir=..., sqlite=True, migrate=True, THREADLESS_RATE_LIMIT_PER_MINUTE="0")

Keyword arguments in capitals are environment variables set before the settings are read.
`var_dir` gives the process its own THREADLESS_VAR_DIR (the SQLite file, the counter files);
`temp_var` names a throwaway one made under the system's temp directory, used only when
THREADLESS_VAR_DIR is not set already; `sqlite=True` drops DATABASE_URL so the embedded default is
used; `log_level` is LOG_LEVEL unless the environment sets it; `migrate=True` brings that
database's schema up to date, and `cache_table=True` also creates the database cache's table. The
orchestrators (`bench.run`, `bench.load`, `bench.reliability`) never call it: they start servers
and child processes, each of which sets itself up.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = "threadless_site.settings"


def setup(
    *,
    var_dir: str | Path | None = None,
    temp_var: str | None = None,
    sqlite: bool = False,
    log_level: str | None = None,
    migrate: bool = False,
    cache_table: bool = False,
    **env: str,
) -> None:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    if var_dir is not None:
        os.environ["THREADLESS_VAR_DIR"] = str(var_dir)
    elif temp_var is not None and "THREADLESS_VAR_DIR" not in os.environ:
        os.environ["THREADLESS_VAR_DIR"] = tempfile.mkdtemp(prefix=temp_var)
    if sqlite:
        os.environ.pop("DATABASE_URL", None)
    if log_level is not None:
        os.environ.setdefault("LOG_LEVEL", log_level)
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", SETTINGS)
    import django

    django.setup()
    if migrate or cache_table:
        from django.core.management import call_command

        if migrate:
            call_command("migrate", verbosity=0, interactive=False)
        if cache_table:
            call_command("createcachetable", verbosity=0)
