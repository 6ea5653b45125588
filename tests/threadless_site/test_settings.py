"""Settings are declared once, each read from the environment by one helper and listed in .env.example."""

from __future__ import annotations

import re
from pathlib import Path

from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
ENV_READ = re.compile(r"\benv(?:str|bool|int|float|list|keylist)\(\s*\"([A-Z][A-Z0-9_]*)\"")


def test_every_variable_settings_reads_has_a_line_in_env_example():
    read = set(ENV_READ.findall((ROOT / "threadless_site" / "settings.py").read_text()))
    listed = set(re.findall(r"^#\s*([A-Z][A-Z0-9_]*)=", (ROOT / ".env.example").read_text(), re.MULTILINE))
    assert read, "the settings module reads nothing from the environment?"
    assert read - listed <= {"DEBUG"}  # DEBUG is the old name of DJANGO_DEBUG, documented on its line


def test_settings_declare_each_name_once_and_patch_nothing_later():
    source = (ROOT / "threadless_site" / "settings.py").read_text()
    names = re.findall(r"^([A-Z][A-Z0-9_]*) = ", source, re.MULTILINE)
    assert len(names) == len(set(names))
    assert not re.search(r"^[A-Z][A-Z0-9_]*(?:\[|\.append\(|\.update\()", source, re.MULTILINE)


def test_no_app_reads_a_setting_with_a_fallback_default():
    offenders = [
        str(path.relative_to(ROOT))
        for app in ("common", "projects", "providers", "memories", "chat", "console", "threadless_site")
        for path in (ROOT / app).rglob("*.py")
        if "getattr(settings" in path.read_text()
    ]
    assert offenders == []


def test_the_filesystem_broker_keeps_its_control_folder_under_the_var_dir():
    options = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {})
    if not settings.CELERY_BROKER_URL.startswith(("threadless-fs://", "filesystem://")):
        return  # Redis in the services run: no folders at all
    for name in ("data_folder_in", "data_folder_out", "processed_folder", "control_folder", "dead_folder"):
        assert Path(options[name]).is_relative_to(settings.VAR_DIR), name
    assert not (ROOT / "control").exists()


def test_the_embedded_broker_starts_without_a_kombu_warning(caplog):
    from threadless_site.celery import app

    with caplog.at_level("WARNING", logger="kombu.connection"):
        with app.connection_for_write() as connection:
            connection.info()
    assert "No hostname" not in caplog.text
