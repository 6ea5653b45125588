"""Measure the server time of the console's memory page for a memory of 10,000 entries.

    .venv/bin/python scripts/measure_memory_page.py

Starts a real Threadless server (uvicorn, own SQLite database), stores 10,000 entries through
the API (decorate, 2,000 messages a call), signs in as the demo staff user and times
GET /manage/memories/<id>/ (first page of the timeline) and an old page, median of 20 each.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness.servers import ThreadlessServer  # noqa: E402


def main() -> None:
    with ThreadlessServer() as server:
        with server.client() as api:
            mid = api.post("/memories", json={"external_id": "big"}).json()["id"]
            for batch in range(5):
                messages = []
                for i in range(1000):
                    n = batch * 1000 + i
                    messages.append({"role": "user", "content": f"Question {n}: what about item {n}?"})
                    messages.append({"role": "assistant", "content": f"Answer {n}: item {n} is fine."})
                api.post(
                    f"/memories/{mid}/decorate", json={"messages": messages, "recall": False}, timeout=120
                ).raise_for_status()
            print("entries stored:", api.get(f"/memories/{mid}").json()["counts"])
        with httpx.Client(base_url=server.url, timeout=60) as web:
            web.get("/manage/login/")
            web.post(
                "/manage/login/",
                data={
                    "username": server.demo["username"],
                    "password": server.demo["password"],
                    "csrfmiddlewaretoken": web.cookies["csrftoken"],
                },
                headers={"Referer": server.url + "/manage/login/"},
            )
            for label, path in [
                ("newest page", f"/manage/memories/{mid}/"),
                ("oldest page", f"/manage/memories/{mid}/?tab=timeline&page=250"),
                ("what the model sees", f"/manage/memories/{mid}/?tab=model"),
            ]:
                times, size = [], 0
                for _ in range(20):
                    start = time.perf_counter()
                    response = web.get(path)
                    times.append((time.perf_counter() - start) * 1000)
                    response.raise_for_status()
                    size = len(response.content)
                    entries = response.text.count('<div class="entry')
                print(
                    f"{label}: median {statistics.median(times):.1f} ms, p90 "
                    f"{sorted(times)[17]:.1f} ms, {size // 1024} KiB, {entries} entries rendered"
                )


if __name__ == "__main__":
    main()
