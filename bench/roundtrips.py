"""Round trips per service call on PostgreSQL, from libpq's protocol trace (harness.pgtrace: each
time the client sends and then waits for the server). Django's psycopg backend binds client side,
so a plain statement, BEGIN and COMMIT included, is one round trip; statements sent together in
pipeline mode are one, listed with each statement in it (decorate's reads,
`memories.selectors.ContextReads`, are one statement of their own). One call each after a
warm-up, `memory_get` included, on a fresh memory of 100 messages in the database DATABASE_URL
names (migrated first).

    DATABASE_URL=postgres://…/yours python -m bench.roundtrips
"""

from __future__ import annotations

import os


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "threadless_site.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from bench.common import conversation, new_user_message, reply_message
    from bench.measure import populate
    from harness.pgtrace import round_trips
    from memories.selectors import memory_get
    from memories.services import memory_create, memory_decorate, report_accept
    from projects.services import project_create

    assert connection.vendor == "postgresql", "round trips are counted on PostgreSQL"
    call_command("migrate", verbosity=0)
    created = project_create(name="roundtrips")
    project = created[0] if isinstance(created, tuple) else created
    memory, _ = memory_create(project=project)
    populate(memory, conversation(100))

    def fresh():
        return memory_get(project=project, memory_id=memory.id)

    calls = {
        "memory_get + decorate store=false": lambda: memory_decorate(memory=fresh(), messages=[new_user_message(1)],
                                                                     store=False),
        "memory_get + decorate store=true": lambda: memory_decorate(memory=fresh(), messages=[new_user_message(2)],
                                                                    store=True),
        "memory_get + report": lambda: report_accept(memory=fresh(), messages=[reply_message(1)], failures=[]),
    }
    for name, fn in calls.items():
        fn()  # warm
        trips = round_trips(connection, fn)
        print(f"{name}: {len(trips)} round trips, {sum(len(t) for t in trips)} statements")
        for statements in trips:
            print("   ", "\n     + ".join(statements) or "(sync)")


if __name__ == "__main__":
    main()
