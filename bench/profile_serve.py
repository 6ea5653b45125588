"""Where the time between an in-process decorate and the same call over HTTP goes.

One client, one memory of 200 messages, the embedded default (or DATABASE_URL / REDIS_URL from
the environment) in a scratch var dir. Times, median of N calls each, back to back:

* `memory_decorate` called in process (what bench.load_inproc measures);
* the same POST through Django's WSGI handler (the whole request cycle, no socket), which is the
  path serving.syncviews runs for a sync view under `make serve`;
* the same POST through the ASGI app (httpx.ASGITransport: the thread hand-off included).

`--profile` adds pyinstrument profiles of the WSGI path (bench extra) to var/profile-serve/.

    python -m bench.profile_serve [--calls 200] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import time

from bench.common import ROOT, conversation

VAR = ROOT / "var" / "profile-serve"


def median_ms(fn, calls: int) -> float:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times[calls // 10:])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    if "THREADLESS_VAR_DIR" not in os.environ:
        shutil.rmtree(VAR / "db", ignore_errors=True)
        os.environ["THREADLESS_VAR_DIR"] = str(VAR / "db")
    os.environ.setdefault("THREADLESS_RATE_LIMIT_PER_MINUTE", "100000000")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "threadless_site.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    import httpx
    import orjson
    from django.test import Client

    from memories.models import Memory
    from memories.services import memory_create, memory_decorate
    from projects.services import key_create, project_create
    from threadless_site.asgi import application

    project = project_create(name="Profile")
    _key, plaintext = key_create(project=project)
    client = Client(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    history = json.dumps({"messages": conversation(200)})
    user = json.dumps({"messages": [{"role": "user", "content": "what next?"}]})
    reply = json.dumps({"messages": [{"role": "assistant", "content": "this."}]})
    current = {}

    def fresh() -> str:
        """A new memory of 200 messages for each phase: every decorate stores one more message."""
        memory, _ = memory_create(project=project)
        response = client.post(f"/v1/memories/{memory.id}/report", history, content_type="application/json")
        assert response.status_code == 202
        current["id"] = memory.id
        return memory.id

    def inproc():
        memory = Memory.objects.get(pk=current["id"])
        orjson.dumps(memory_decorate(memory=memory, messages=[{"role": "user", "content": "what next?"}], store=True))

    def wsgi_decorate():
        response = client.post(f"/v1/memories/{current['id']}/decorate", user, content_type="application/json")
        assert response.status_code == 200

    def wsgi_report():
        response = client.post(f"/v1/memories/{current['id']}/report", reply, content_type="application/json")
        assert response.status_code == 202

    def wsgi_healthz():
        assert client.get("/healthz").status_code == 200

    async def asgi_decorate(n: int) -> float:
        transport = httpx.ASGITransport(app=application)
        headers = {"Authorization": f"Bearer {plaintext}", "Content-Type": "application/json"}
        path = f"/v1/memories/{current['id']}/decorate"
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            times = []
            for _ in range(n):
                start = time.perf_counter()
                response = await http.post(path, content=user, headers=headers)
                assert response.status_code == 200, response.text[:200]
                times.append((time.perf_counter() - start) * 1000)
        return statistics.median(times[n // 10:])

    def phase(fn) -> float:
        fresh()
        return median_ms(fn, args.calls)

    fresh()
    for fn in (inproc, wsgi_decorate, wsgi_report):
        median_ms(fn, 20)  # warm
    out = {
        "inproc_decorate": phase(inproc),
        "wsgi_decorate": phase(wsgi_decorate),
        "asgi_decorate": (fresh(), asyncio.run(asgi_decorate(args.calls)))[1],
        "inproc_decorate_again": phase(inproc),
        "wsgi_report": phase(wsgi_report),
        "wsgi_healthz": median_ms(wsgi_healthz, args.calls),
    }
    print(json.dumps({k: round(v, 3) for k, v in out.items()}))
    if args.profile:
        from pyinstrument import Profiler

        VAR.mkdir(parents=True, exist_ok=True)
        for name, fn in (("decorate", wsgi_decorate), ("report", wsgi_report), ("inproc", inproc)):
            fresh()
            profiler = Profiler(interval=0.0002)
            profiler.start()
            for _ in range(args.calls):
                fn()
            profiler.stop()
            (VAR / f"{name}.txt").write_text(profiler.output_text(unicode=True, show_all=False))
            (VAR / f"{name}.html").write_text(profiler.output_html())
        print(f"profiles in {VAR}")


if __name__ == "__main__":
    main()
