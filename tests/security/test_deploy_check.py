"""`check --deploy` is clean with the production env of docs/deployment.md.

The test reads the env block from the doc itself, so the documented settings are the checked ones.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parents[2]
EXPORT = re.compile(r"^export ([A-Z_]+)=(.+)$")


def documented_production_env() -> dict[str, str]:
    text = (ROOT / "docs" / "deployment.md").read_text()
    block = text.split("# production env (checked by tests/security/test_deploy_check.py)\n", 1)[1]
    block = block.split("```", 1)[0]
    env = {}
    for line in block.splitlines():
        match = EXPORT.match(line.strip())
        assert match, f"not a plain export line: {line!r}"
        env[match[1]] = match[2]
    # The two values the doc reads from files: made here as an operator would.
    env["SECRET_KEY"] = secrets.token_urlsafe(48)
    env["THREADLESS_SECRET_STORE_KEYS"] = Fernet.generate_key().decode()
    return env


def run_check(tmp_path: Path, extra: dict[str, str]) -> subprocess.CompletedProcess:
    # A production process: none of the test run's own settings (the e2e conftest, for one, sets
    # DJANGO_ALLOW_ASYNC_UNSAFE, which check --deploy rightly warns about).
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SECURE_", "SESSION_", "CSRF_"))
        and k not in {"DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    }
    env = {
        **base,
        "THREADLESS_VAR_DIR": str(tmp_path),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "DJANGO_SETTINGS_MODULE": "threadless_site.settings",
        **extra,
    }
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_passes_with_the_documented_production_env(tmp_path):
    env = documented_production_env()
    assert {
        "SECURE_SSL_REDIRECT",
        "SECURE_HSTS_SECONDS",
        "SESSION_COOKIE_SECURE",
        "CSRF_COOKIE_SECURE",
        "SECURE_PROXY_SSL_HEADER",
    } <= set(env)
    out = run_check(tmp_path, env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "System check identified no issues" in out.stdout


def test_check_deploy_fails_on_the_development_defaults(tmp_path):
    out = run_check(tmp_path, {})
    assert out.returncode != 0
    for code in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert code in out.stderr + out.stdout


def test_the_proxy_header_setting_becomes_djangos_tuple(tmp_path):
    from threadless_site.keyfiles import proxy_ssl_header

    assert proxy_ssl_header("X-Forwarded-Proto") == ("HTTP_X_FORWARDED_PROTO", "https")
    assert proxy_ssl_header("HTTP_X_FORWARDED_SSL,on") == ("HTTP_X_FORWARDED_SSL", "on")
    assert proxy_ssl_header("") is None


def test_behind_the_proxy_plain_http_is_redirected_and_https_gets_hsts(db, client, settings):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_HSTS_SECONDS = 31536000
    plain = client.get("/manage/login/")
    assert plain.status_code == 301 and plain["Location"].startswith("https://")
    secure = client.get("/manage/login/", HTTP_X_FORWARDED_PROTO="https")
    assert secure.status_code == 200
    assert secure["Strict-Transport-Security"].startswith("max-age=31536000")
    assert client.get("/healthz").status_code == 200  # the load balancer's probe stays on http
