"""memory_get / memory_lock read the memory row with plain SQL and the ORM's converters (the hot
path of decorate, report and the pipeline): the same instance the ORM would build."""

from __future__ import annotations

import pytest

from common.errors import NotFound
from memories import services
from memories.models import Memory
from memories.selectors import memory_by_external_id, memory_get


def test_memory_get_builds_the_instance_the_orm_builds_and_keeps_the_project_it_was_scoped_by(
    cast, django_assert_num_queries
):
    memory, _ = services.memory_create(
        project=cast.project_a, metadata={"user": "ann", "n": 3}, instructions="Be brief."
    )
    services.memory_decorate(memory=memory, messages=[{"role": "user", "content": "hi ☕"}])
    fetched = memory_get(project=cast.project_a, memory_id=memory.id)
    expected = Memory.objects.get(pk=memory.pk)
    for field in Memory._meta.concrete_fields:
        assert getattr(fetched, field.attname) == getattr(expected, field.attname), field.name
    assert fetched.created_at.tzinfo is not None and fetched.metadata == {"user": "ann", "n": 3}
    assert not fetched._state.adding
    with django_assert_num_queries(0):
        assert fetched.project.pk == cast.project_a.pk


def test_memory_get_is_scoped_to_the_project(cast):
    memory, _ = services.memory_create(project=cast.project_a)
    with pytest.raises(NotFound):
        memory_get(project=cast.project_b, memory_id=memory.id)


def test_an_external_id_finds_its_memory_in_one_read_and_only_in_its_project(cast, django_assert_num_queries):
    memory, _ = services.memory_create(project=cast.project_a, external_id="user-7", metadata={"n": 1})
    with django_assert_num_queries(1):
        found = memory_by_external_id(project=cast.project_a, external_id="user-7")
        assert found.project.pk == cast.project_a.pk  # the project it was scoped by: no second read
    assert (found.pk, found.metadata, found.external_id) == (memory.pk, {"n": 1}, "user-7")
    assert memory_by_external_id(project=cast.project_b, external_id="user-7") is None
    assert memory_by_external_id(project=cast.project_a, external_id="user-8") is None
    with django_assert_num_queries(1):  # get-or-create of an existing one: the same one read
        again, created = services.memory_create(project=cast.project_a, external_id="user-7")
        assert again.project.pk == cast.project_a.pk
    assert again.pk == memory.pk and not created


def test_memory_lock_of_a_deleted_memory_is_the_apis_not_found(cast):
    from django.db import transaction

    memory, _ = services.memory_create(project=cast.project_a)
    Memory.objects.filter(pk=memory.pk).delete()
    with pytest.raises(NotFound, match=memory.pk), transaction.atomic():
        services.memory_lock(memory)
