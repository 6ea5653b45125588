"""Seed a running Threadless server through its public API (real HTTP), for browser tests and
screenshots: a memory with a normal turn, a failed turn (strict write discipline, digest) and
facts.
"""

from __future__ import annotations

from dataclasses import dataclass

RAW_ERROR = (
    'weather-service: HTTP 503 {"error": {"message": "upstream overloaded"}} '
    "at com.example.weather.Client.fetch(Client.java:88) url=https://weather.example/v2?q=oslo"
)


@dataclass
class Seeded:
    memory_id: str
    project_id: str


def seed_memory(server, *, external_id: str = "customer-42") -> Seeded:
    with server.client() as api:
        memory = api.post(
            "/memories",
            json={
                "external_id": external_id,
                "metadata": {"plan": "pro", "name": "Ann <b>Lee</b>"},
                "instructions": "You are a friendly travel assistant.",
                "policy": {"strictWriteDiscipline": {"enabled": True, "onFailure": "digest"}},
            },
        ).json()
        mid = memory["id"]
        exchanges = [
            (
                "Hi! I'm planning a trip to Oslo in March.",
                "Lovely — Oslo in March is crisp. What would you like help with?",
            ),
            ("<script>alert('x')</script> Can you check the weather there?", None),
            (
                "OK, then suggest three museums.",
                "Try the Munch Museum, the Viking Ship Museum and the National Museum.",
            ),
        ]
        for user, reply in exchanges:
            r = api.post(f"/memories/{mid}/decorate", json={"messages": [{"role": "user", "content": user}]})
            r.raise_for_status()
            if reply is None:
                api.post(
                    f"/memories/{mid}/report",
                    json={
                        "messages": [],
                        "failures": [
                            {"task_id": "eddi://weather", "error": RAW_ERROR, "output": {"status": 503}}
                        ],
                    },
                ).raise_for_status()
            else:
                api.post(
                    f"/memories/{mid}/report", json={"messages": [{"role": "assistant", "content": reply}]}
                ).raise_for_status()
        api.post(f"/memories/{mid}/facts", json={"text": "The user is planning a trip to Oslo in March."})
        api.post(f"/memories/{mid}/facts", json={"text": "The user likes museums."})
    return Seeded(memory_id=mid, project_id=server.demo["project_id"])
