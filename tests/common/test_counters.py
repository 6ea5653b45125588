"""Counters stay exact across real processes: the rate limit and the usage totals.

Two OS processes increment the same keys at once through common.counters (the embedded
default's counter file, or Redis under THREADLESS_SERVICES); every count must be handed out
exactly once, so a limit of L lets exactly L requests through whichever process serves them.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from common import counters
from projects.models import ApiCall
from projects.usage import DAY_TTL, usage_flush, volume_key

ROOT = Path(__file__).resolve().parents[2]
PER_PROCESS = 300

CHILD = """
import json, os, sys
import django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "threadless_site.settings")
django.setup()
from django.conf import settings
settings.DATABASES["default"]["NAME"] = sys.argv[4]  # the test database: the same deployment
from common import counters
rate_key, volume_key, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.stdout.write("ready\\n"); sys.stdout.flush()
sys.stdin.readline()  # both start together
seen = []
for _ in range(n):
    seen.append(counters.incr_many([(rate_key, 120, False), (volume_key, 3600, True)]))
print(json.dumps(seen))
"""


def _run_two(rate_key: str, vol_key: str) -> list[list[int]]:
    env = {
        **os.environ,
        "THREADLESS_COUNTERS_PATH": counters.counters_path(),
        "REDIS_URL": settings.REDIS_URL,
    }
    name = str(settings.DATABASES["default"]["NAME"])
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, rate_key, vol_key, str(PER_PROCESS), name],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for proc in procs:
        assert proc.stdout.readline().strip() == "ready"
    for proc in procs:
        proc.stdin.write("go\n")
        proc.stdin.flush()
    results = []
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        results.extend(json.loads(out))
    return results


def test_two_processes_counting_one_key_hand_out_every_count_exactly_once(db):
    rate_key = f"tl:rl:test:{secrets.token_hex(6)}:1"
    vol_key = f"tl:use:d:prj_none{secrets.token_hex(4)}:2026-01-01:decorate"
    pairs = _run_two(rate_key, vol_key)
    total = 2 * PER_PROCESS
    assert sorted(rate for rate, _ in pairs) == list(range(1, total + 1))
    assert sorted(vol for _, vol in pairs) == list(range(1, total + 1))
    assert counters.store().get(rate_key) == total
    # So a limit of L lets exactly L of them through, whichever process served them.
    limit = 137
    assert sum(1 for rate, _ in pairs if rate <= limit) == limit


def test_volume_counted_by_two_processes_reaches_the_database_exactly(cast):
    day = "2026-01-02"
    key = volume_key(cast.project_a.pk, day, "report")
    pairs = _run_two(f"tl:rl:test:{secrets.token_hex(6)}:1", key)
    assert len(pairs) == 2 * PER_PROCESS
    usage_flush()
    row = ApiCall.objects.get(project=cast.project_a, day=day, operation="report")
    assert row.count == 2 * PER_PROCESS
    # A second flush (or two at once) copies the same total: nothing is counted twice.
    counters.incr(key, DAY_TTL, flush=True)
    usage_flush()
    usage_flush()
    row.refresh_from_db()
    assert row.count == 2 * PER_PROCESS + 1


def test_a_lost_counter_store_starts_again_from_the_flushed_total(cast):
    from projects.usage import seeded

    key = volume_key(cast.project_a.pk, "2026-01-03", "decorate")
    ApiCall.objects.create(project=cast.project_a, day="2026-01-03", operation="decorate", count=40)
    # The key is new to the store (as after a Redis restart): its first count continues from 40.
    assert seeded(key, counters.incr(key, DAY_TTL, flush=True)) == 41
    assert seeded(key, counters.incr(key, DAY_TTL, flush=True)) == 42
    usage_flush()
    assert ApiCall.objects.get(project=cast.project_a, day="2026-01-03", operation="decorate").count == 42


def test_deployments_sharing_one_redis_keep_their_dirty_sets_apart():
    mine = settings.DATABASES["default"]
    assert counters.deployment_tag() == counters.deployment_tag(dict(mine))
    assert counters.deployment_tag({**mine, "NAME": "another_deployment"}) != counters.deployment_tag()


def test_the_health_checking_postgresql_backend_is_the_same_deployment_as_djangos():
    # Totals marked dirty before the backend subclass (common.pgbackend) are still this deployment's.
    db = {"HOST": "db.example", "PORT": "5432", "NAME": "threadless"}
    assert counters.deployment_tag({**db, "ENGINE": "common.pgbackend"}) == counters.deployment_tag(
        {**db, "ENGINE": "django.db.backends.postgresql"}
    )
    assert counters.deployment_tag({**db, "ENGINE": "common.pgbackend"}) != counters.deployment_tag(
        {**db, "ENGINE": "django.db.backends.sqlite3"}
    )


def test_read_and_incr_reads_the_key_and_counts_each_item_with_its_ttl_and_dirty_mark():
    gen, rate, volume = (f"tl:test:{name}:{secrets.token_hex(4)}" for name in ("gen", "rate", "volume"))
    assert counters.read_and_incr(gen, [(rate, 120, False), (volume, 3600, True)]) == (0, [1, 1])
    counters.incr(gen, 3600)  # as a key change moves the generation
    counters.incr(gen, 3600)
    assert counters.read_and_incr(gen, [(rate, 120, False), (volume, 3600, True)]) == (2, [2, 2])
    assert counters.read_and_incr(None, [(volume, 3600, True)]) == (0, [3])
    store = counters.store()
    if isinstance(store, counters.RedisCounters):
        assert 0 < store.client.ttl(rate) <= 120 and 3000 < store.client.ttl(volume) <= 3600
        assert store.client.sismember(store.dirty, volume) and not store.client.sismember(store.dirty, rate)


def test_a_key_counted_twice_or_read_while_counted_still_counts_one_after_the_other():
    # The counter file counts distinct keys in one UPSERT statement; these take its transaction path.
    rate, volume = (f"tl:test:{name}:{secrets.token_hex(4)}" for name in ("rate", "volume"))
    assert counters.incr_many([(rate, 120, False), (rate, 120, False), (volume, 3600, True)]) == [1, 2, 1]
    assert counters.read_and_incr(rate, [(rate, 120, False), (volume, 3600, True)]) == (2, [3, 2])
    assert counters.read_and_incr(volume, [(rate, 120, False)]) == (2, [4])


def test_counting_distinct_keys_in_one_statement_and_a_repeated_key_the_old_way_count_alike():
    a, b, gen = (f"tl:test:{name}:{secrets.token_hex(4)}" for name in ("a", "b", "gen"))
    counters.incr(gen, 3600)
    assert counters.read_and_incr(gen, [(a, 120, False), (b, 120, True)]) == (1, [1, 1])
    assert counters.read_and_incr(gen, [(a, 120, False), (a, 120, False)]) == (1, [2, 3])
    assert counters.incr_many([(b, 120, True), (a, 120, False)]) == [2, 4]


def test_the_redis_counting_call_survives_a_dropped_connection_and_an_unknown_script():
    store = counters.store()
    if not isinstance(store, counters.RedisCounters):
        pytest.skip("the counter file has no connection to lose (runs with Redis: make test-services)")
    key = f"tl:test:drop:{secrets.token_hex(4)}"
    assert store.read_and_incr(None, [(key, 120, False)]) == (0, [1])
    own = store._own_connection()
    own.send_command("CLIENT", "ID")
    store.client.execute_command("CLIENT", "KILL", "ID", own.read_response())  # only this thread's connection
    assert store.read_and_incr(None, [(key, 120, False)]) == (0, [2])  # the client's way, reconnecting
    script = store._read_and_incr
    real, script.sha = script.sha, "0" * 40  # as if the server had lost the script: loaded again
    try:
        assert store.read_and_incr(None, [(key, 120, False)]) == (0, [3])
    finally:
        script.sha = real
    assert store.read_and_incr(None, [(key, 120, False)]) == (0, [4])
