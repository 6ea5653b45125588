"""The Overview's background-work card: outbox depth, the worker's lag and degraded decorates,
scoped to the projects the staff member may see."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from common import metrics
from memories.models import Outbox
from memories.services import memory_create


def figure(html: str, name: str) -> str:
    match = re.search(rf'data-figure="{name}">([^<]*)<', html)
    assert match, name
    return match.group(1).strip()


def test_the_overview_shows_the_waiting_outbox_rows_and_how_long_the_oldest_has_waited(staff_client, cast):
    memory, _ = memory_create(project=cast.project_a)
    Outbox.objects.create(memory=memory, payload={"from_seq": 1, "to_seq": 1})
    Outbox.objects.create(memory=memory, payload={"from_seq": 1, "to_seq": 1}, processed_at=timezone.now())
    Outbox.objects.filter(processed_at=None).update(created_at=timezone.now() - timedelta(seconds=90))
    html = staff_client.get("/manage/").content.decode()
    assert figure(html, "outbox-depth") == "1"
    assert 89 <= int(figure(html, "worker-lag").removesuffix(" s")) <= 200
    degraded = figure(html, "degraded")
    assert degraded == (str(int(metrics.counter_total(metrics.DECORATE_DEGRADED))) if metrics.ON else "—")


def test_the_card_counts_only_the_projects_the_staff_member_sees(cast, django_user_model):
    memory, _ = memory_create(project=cast.project_b)
    Outbox.objects.create(memory=memory, payload={})
    only_a = django_user_model.objects.create_user("only-a", password="only-a-pass-123", is_staff=True)
    cast.project_a.members.add(only_a)
    client = Client()
    client.force_login(only_a)
    html = client.get("/manage/").content.decode()
    assert figure(html, "outbox-depth") == "0" and figure(html, "worker-lag") == "0 s"
    assert client.get(f"/manage/?project={cast.project_b.pk}").status_code == 404


def test_a_job_that_always_fails_shows_as_parked_to_its_projects_staff_only(
    cast, django_user_model, settings, monkeypatch
):
    from memories import services
    from memories.services import outbox as outbox_module

    settings.THREADLESS_OUTBOX_MAX_ATTEMPTS = 1

    def fails(**kwargs):
        raise RuntimeError("upstream said 401 for Authorization: Bearer sk-proj-9a8b7c6d5e4f")

    monkeypatch.setattr(outbox_module, "process_entries", fails)
    memory, _ = memory_create(project=cast.project_a)
    services.memory_decorate(memory=memory, messages=[{"role": "user", "content": "hi"}])
    services.report_accept(memory=memory, messages=[{"role": "assistant", "content": "hello"}], failures=[])
    with pytest.raises(RuntimeError):
        services.outbox_process_next()

    def overview_for(name, project):
        """The Overview as a staff member of `project` alone sees it."""
        user = django_user_model.objects.create_user(name, password=f"{name}-pass-123", is_staff=True)
        project.members.add(user)
        client = Client()
        client.force_login(user)
        return client.get("/manage/").content.decode()

    html = overview_for("staff-of-a", cast.project_a)
    assert figure(html, "parked") == "1" and figure(html, "outbox-depth") == "0"
    reason = figure(html, "parked-reason")
    assert reason.startswith("RuntimeError: upstream said 401 for Authorization: [redacted]")
    assert "sk-proj" not in html
    other = overview_for("staff-of-b", cast.project_b)
    assert figure(other, "parked") == "0" and "upstream said 401" not in other
