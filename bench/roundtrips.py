"""Round trips per service call on PostgreSQL, from libpq's protocol trace: the frontend's
`Query` messages (Django's psycopg backend binds client side, so every statement, BEGIN and
COMMIT included, is one). One call each after a warm-up, `memory_get` included, on a fresh
memory of 100 messages in the database DATABASE_URL names (migrated first).

    DATABASE_URL=postgres://…/yours python -m bench.roundtrips
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "threadless_site.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from bench.common import conversation, new_user_message, reply_message
    from bench.measure import populate
    from memories.selectors import memory_get
    from memories.services import memory_create, memory_decorate, report_accept
    from projects.services import project_create

    assert connection.vendor == "postgresql", "round trips are counted on PostgreSQL"
    call_command("migrate", verbosity=0)
    created = project_create(name="roundtrips")
    project = created[0] if isinstance(created, tuple) else created
    memory, _ = memory_create(project=project)
    populate(memory, conversation(100))

    def queries(fn) -> list[str]:
        connection.ensure_connection()
        pgconn = connection.connection.pgconn
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "trace"
            with path.open("w") as fh:
                pgconn.trace(fh.fileno())
                try:
                    fn()
                finally:
                    pgconn.untrace()
            lines = path.read_text().splitlines()
        return [line.split("\t")[-1][:80] for line in lines if "\tF\t" in line and "\tQuery\t" in line]

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
        sent = queries(fn)
        print(f"{name}: {len(sent)} round trips")
        for sql in sent:
            print("   ", sql)


if __name__ == "__main__":
    main()
