"""Secrets at rest.

The attacker has the repository (so the once-committed SECRET_KEY) and a copy of the database
file; a provider key stored in the console must not decrypt from those. Keys rotate without
losing data: API keys survive a SECRET_KEY rotation, stored secrets a store-key rotation.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet, InvalidToken
from django.core.management import call_command

from projects import secretbox
from projects.models import ApiKey, Secret
from projects.services import secret_set, secret_value
from threadless_site.keyfiles import DEV_SECRET_KEY, secret_store_keys

ROOT = Path(__file__).resolve().parents[2]
PRINT_KEYS = (
    "from django.conf import settings; "
    "print('KEYS', settings.SECRET_KEY, settings.THREADLESS_SECRET_STORE_KEYS[0])"
)


def _keys(out: subprocess.CompletedProcess) -> list[str]:
    assert out.returncode == 0, out.stderr
    return next(line.split()[1:] for line in out.stdout.splitlines() if line.startswith("KEYS "))


def _env(var: Path, **extra: str) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"SECRET_KEY", "SECRET_KEY_FALLBACKS", "THREADLESS_SECRET_STORE_KEYS", "DEBUG"}
    }
    return {
        **env,
        "THREADLESS_VAR_DIR": str(var),
        "DATABASE_URL": f"sqlite:///{var / 'db.sqlite3'}",
        "DJANGO_SETTINGS_MODULE": "threadless_site.settings",
        **extra,
    }


def _manage(var: Path, *args: str, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=_env(var, **extra),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_fresh_install_generates_its_own_secret_key_and_store_key_kept_private(tmp_path):
    secret_key, store_key = _keys(_manage(tmp_path / "one", "shell", "-c", PRINT_KEYS))
    for name, value in (("secret_key", secret_key), ("secret_store_key", store_key)):
        path = tmp_path / "one" / name
        assert path.read_text().strip() == value
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert secret_key != DEV_SECRET_KEY and len(secret_key) >= 50
    again = _keys(_manage(tmp_path / "one", "shell", "-c", PRINT_KEYS))
    assert again == [secret_key, store_key]  # stable across restarts
    other = _keys(_manage(tmp_path / "two", "shell", "-c", PRINT_KEYS))
    assert set(other).isdisjoint({secret_key, store_key})  # per install


def test_the_server_refuses_to_start_on_the_committed_secret_key_unless_debug_is_on(tmp_path):
    refused = _manage(tmp_path, "check", SECRET_KEY=DEV_SECRET_KEY)
    assert refused.returncode != 0
    assert "ImproperlyConfigured" in refused.stderr
    assert "SECRET_KEY is the development value committed in the repository" in refused.stderr
    assert _manage(tmp_path, "check", SECRET_KEY=DEV_SECRET_KEY, DEBUG="true").returncode == 0


def test_an_environment_secret_key_wins_over_the_file(tmp_path):
    out = _manage(tmp_path, "shell", "-c", PRINT_KEYS, SECRET_KEY="k" * 60)
    assert _keys(out)[0] == "k" * 60


def test_a_malformed_secret_store_key_stops_the_process_with_a_clear_message(tmp_path):
    out = _manage(tmp_path, "check", THREADLESS_SECRET_STORE_KEYS="not-a-key")
    assert out.returncode != 0
    assert "THREADLESS_SECRET_STORE_KEYS: key 1 is not a Fernet key" in out.stderr


def test_secret_store_keys_come_newest_first_from_the_setting(tmp_path):
    keys = [Fernet.generate_key().decode() for _ in range(2)]
    assert secret_store_keys(keys, tmp_path / "unused") == keys
    assert not (tmp_path / "unused").exists()


def test_the_repository_and_a_stolen_database_do_not_decrypt_a_stored_provider_key(cast):
    secret_set(project=cast.project_a, name="OPENAI", value="sk-live-0123456789abcdef")
    ciphertext = Secret.objects.get(project=cast.project_a, name="OPENAI").ciphertext
    assert "sk-live" not in ciphertext
    # What the attacker can derive: the key earlier releases computed from the committed default.
    with pytest.raises(InvalidToken):
        Fernet(secretbox.legacy_key(DEV_SECRET_KEY)).decrypt(ciphertext.encode())
    # Not even SECRET_KEY opens it: the store has its own key.
    from django.conf import settings

    with pytest.raises(InvalidToken):
        Fernet(secretbox.legacy_key(settings.SECRET_KEY)).decrypt(ciphertext.encode())
    assert secret_value(project_id=cast.project_a.pk, name="OPENAI") == "sk-live-0123456789abcdef"


def test_rotate_secrets_re_encrypts_every_secret_with_the_newest_key(cast, settings):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.THREADLESS_SECRET_STORE_KEYS = [old]
    secret_set(project=cast.project_a, name="A", value="value-a-0123456789")
    secret_set(project=cast.project_b, name="B", value="value-b-0123456789")
    settings.THREADLESS_SECRET_STORE_KEYS = [new, old]
    call_command("rotate_secrets")
    settings.THREADLESS_SECRET_STORE_KEYS = [new]  # the old key is gone now
    assert secret_value(project_id=cast.project_a.pk, name="A") == "value-a-0123456789"
    assert secret_value(project_id=cast.project_b.pk, name="B") == "value-b-0123456789"
    for secret in Secret.objects.all():
        with pytest.raises(InvalidToken):
            Fernet(old).decrypt(secret.ciphertext.encode())


def test_secrets_stored_by_earlier_releases_still_decrypt_and_rotate_to_the_store_key(cast, settings):
    legacy = Fernet(secretbox.legacy_key(settings.SECRET_KEY)).encrypt(b"sk-from-an-old-release").decode()
    Secret.objects.create(project=cast.project_a, name="OLD", ciphertext=legacy, hint="…ease")
    assert secret_value(project_id=cast.project_a.pk, name="OLD") == "sk-from-an-old-release"
    call_command("rotate_secrets")
    settings.SECRET_KEY = "a-new-secret-key-" + "z" * 50  # the legacy key no longer exists
    assert secret_value(project_id=cast.project_a.pk, name="OLD") == "sk-from-an-old-release"


def test_a_secret_no_configured_key_opens_is_reported_not_lost(cast, settings, capsys):
    secret_set(project=cast.project_a, name="LOST", value="value-0123456789")
    settings.THREADLESS_SECRET_STORE_KEYS = [Fernet.generate_key().decode()]
    with pytest.raises(LookupError, match="cannot be decrypted"):
        secret_value(project_id=cast.project_a.pk, name="LOST")
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="could not be decrypted"):
        call_command("rotate_secrets")
    assert Secret.objects.filter(name="LOST").exists()


def test_api_keys_survive_a_secret_key_rotation_through_the_fallbacks(cast, settings):
    old = settings.SECRET_KEY
    settings.SECRET_KEY = "rotated-secret-key-" + "r" * 50
    settings.SECRET_KEY_FALLBACKS = [old]
    assert cast.a.get("/v1/memories").status_code == 200
    # The hash was re-made under the new SECRET_KEY, so the fallback can go.
    settings.SECRET_KEY_FALLBACKS = []
    assert cast.a.get("/v1/memories").status_code == 200
    assert ApiKey.objects.filter(project=cast.project_a).count() == 1


def test_without_the_fallback_a_rotated_secret_key_refuses_old_api_keys(cast, settings):
    settings.SECRET_KEY = "rotated-secret-key-" + "r" * 50
    settings.SECRET_KEY_FALLBACKS = []
    response = cast.b.get("/v1/memories")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"
