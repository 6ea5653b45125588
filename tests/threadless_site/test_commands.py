"""Management commands of SPEC 9 and the load-balancer probes."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from projects.models import ApiKey, Project


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def bearer(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


def test_create_project_prints_its_id_as_json(db):
    project = json.loads(run("create_project", "Acme", "--json"))
    assert project["name"] == "Acme"
    assert Project.objects.filter(pk=project["id"]).exists()
    assert "Created project Acme" in run("create_project", "Acme 2")


def test_create_project_takes_a_rate_limit(db):
    project = json.loads(run("create_project", "Slow", "--rate-limit", "5", "--json"))
    assert Project.objects.get(pk=project["id"]).rate_limit_per_minute == 5


def test_create_key_prints_the_key_once_with_prefix_kind_and_project(db):
    project = json.loads(run("create_project", "Acme", "--json"))
    key = json.loads(run("create_key", "--project", project["id"], "--json"))
    assert set(key) == {"key", "prefix", "kind", "project_id"}
    assert key["kind"] == "project" and key["project_id"] == project["id"]
    assert key["key"].startswith(key["prefix"]) and key["prefix"].startswith("tl_proj_")
    stored = ApiKey.objects.get(prefix=key["prefix"])
    assert key["key"] not in (stored.hashed, stored.lookup)
    assert bearer(key["key"]).get("/v1/memories").status_code == 200


def test_a_publishable_key_needs_an_agent(db):
    project = json.loads(run("create_project", "Acme", "--json"))
    with pytest.raises(CommandError, match="--agent"):
        run("create_key", "--project", project["id"], "--kind", "publishable", "--json")


def test_create_key_for_an_unknown_project_fails_clearly(db):
    with pytest.raises(CommandError, match="No project"):
        run("create_key", "--project", "prj_nope", "--json")


def test_revoke_key_takes_the_prefix_and_the_key_stops_working(db):
    project = json.loads(run("create_project", "Acme", "--json"))
    key = json.loads(run("create_key", "--project", project["id"], "--json"))
    assert run("revoke_key", key["prefix"]).strip() == f"Revoked {key['prefix']}"
    response = bearer(key["key"]).get("/v1/memories")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"
    with pytest.raises(CommandError, match="No key"):
        run("revoke_key", "tl_proj_nothere00")


def test_bootstrap_demo_is_idempotent_and_prints_the_same_working_key(db, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    first = json.loads(run("bootstrap_demo", "--json"))
    second = json.loads(run("bootstrap_demo", "--json"))
    assert first["key"] == second["key"] and first["password"] == second["password"]
    assert first["project_id"] == second["project_id"]
    assert Project.objects.filter(name="Demo project").count() == 1
    assert bearer(first["key"]).post("/v1/memories", {}, format="json").status_code == 201
    text = run("bootstrap_demo")
    assert first["key"] in text and first["username"] in text


def test_bootstrap_demo_under_the_json_log_format_prints_a_json_line_without_secrets(db, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    settings.THREADLESS_LOG_FORMAT = "json"
    demo = json.loads(run("bootstrap_demo", "--json"))
    [line] = run("bootstrap_demo").strip().splitlines()
    record = json.loads(line)
    assert record["logger"] == "threadless.demo" and "/manage/" in record["message"]
    assert demo["key"] not in line and demo["password"] not in line


def test_bootstrap_demo_again_does_not_mark_the_demo_keys_used(db, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    demo = json.loads(run("bootstrap_demo", "--json"))
    run("bootstrap_demo", "--json")  # what a second `make run` does
    keys = ApiKey.objects.filter(project_id=demo["project_id"])
    assert keys.count() == 2  # the project key and the demo agent's publishable key
    assert list(keys.values_list("last_used_at", flat=True)) == [None, None]
    bearer(demo["key"]).get("/v1/memories")
    assert keys.exclude(last_used_at=None).count() == 1


def test_bootstrap_demo_replaces_a_revoked_demo_key(db, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    first = json.loads(run("bootstrap_demo", "--json"))
    run("revoke_key", first["key"][:18])
    second = json.loads(run("bootstrap_demo", "--json"))
    assert second["key"] != first["key"]
    assert bearer(second["key"]).get("/v1/memories").status_code == 200


def test_healthz_says_the_process_is_up(db):
    response = APIClient().get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


def test_readyz_checks_the_database_and_the_broker(db):
    response = APIClient().get("/readyz")
    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["checks"]) == ("ok", {"database": "ok", "broker": "ok"})
    assert body["worker"]["worker"] in ("ok", "stale")  # reported, never a reason to fail (test_health.py)
