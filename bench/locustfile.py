"""Locust users for `make reliability`: agents that create memories and run turns (decorate the
user's message, report the reply), with the odd read. Every message the server acknowledged
(200 from decorate, 202 from report) is counted and written to $LOCUST_COUNTS at the end, so
the run can check that the stored message count equals the count acknowledged.

With THREADLESS_AGENT set (an agent on the `demo` model), users also talk to the agent (JSON
say); every 200 say stored its user input once, which the run checks too.

Environment: THREADLESS_KEY (a project key), LOCUST_COUNTS (a JSON file to write),
LOCUST_RUN (a tag stored in each memory's metadata), THREADLESS_AGENT (optional agent id).
"""

from __future__ import annotations

import itertools
import json
import os

from locust import FastHttpUser, between, events, task

COUNTS = {"acked_messages": 0, "memories": 0, "decorate_ok": 0, "report_ok": 0, "say_ok": 0, "errors": 0}
_ids = itertools.count(1)


@events.test_stop.add_listener
def _write_counts(**_kwargs) -> None:
    path = os.environ.get("LOCUST_COUNTS")
    if path:
        with open(path, "w") as fh:
            json.dump(COUNTS, fh)


class Agent(FastHttpUser):
    wait_time = between(0.005, 0.03)
    network_timeout = 30.0
    connection_timeout = 10.0

    def on_start(self) -> None:
        self.headers = {
            "Authorization": f"Bearer {os.environ['THREADLESS_KEY']}",
            "Content-Type": "application/json",
        }
        self.memory_id = None
        self.n = next(_ids)
        self.turns = 0
        self.conversation_id = None
        self.new_memory()

    def new_memory(self) -> None:
        with self.client.post(
            "/v1/memories",
            json={"metadata": {"run": os.environ.get("LOCUST_RUN", "load"), "user": str(self.n)}},
            headers=self.headers,
            name="create",
            catch_response=True,
        ) as r:
            if r.status_code == 201:
                self.memory_id = r.json()["id"]
                COUNTS["memories"] += 1
            else:
                COUNTS["errors"] += 1
                r.failure(f"create answered {r.status_code}")

    @task(8)
    def turn(self) -> None:
        if self.memory_id is None:
            return self.new_memory()
        self.turns += 1
        user = f"User {self.n} turn {self.turns}: my favourite number is {self.turns * 7}. What is it?"
        with self.client.post(
            f"/v1/memories/{self.memory_id}/decorate",
            json={"messages": [{"role": "user", "content": user}], "budget_tokens": 4000},
            headers=self.headers,
            name="decorate",
            catch_response=True,
        ) as r:
            if r.status_code != 200:
                COUNTS["errors"] += 1
                r.failure(f"decorate answered {r.status_code}")
                return
            COUNTS["acked_messages"] += 1
            COUNTS["decorate_ok"] += 1
        reply = f"Your favourite number is {self.turns * 7}."
        with self.client.post(
            f"/v1/memories/{self.memory_id}/report",
            json={"messages": [{"role": "assistant", "content": reply}]},
            headers=self.headers,
            name="report",
            catch_response=True,
        ) as r:
            if r.status_code != 202:
                COUNTS["errors"] += 1
                r.failure(f"report answered {r.status_code}")
                return
            COUNTS["acked_messages"] += 1
            COUNTS["report_ok"] += 1

    @task(1)
    def create(self) -> None:
        self.new_memory()

    @task(1)
    def read(self) -> None:
        if self.memory_id:
            self.client.get(f"/v1/memories/{self.memory_id}", headers=self.headers, name="get memory")

    @task(2)
    def say(self) -> None:
        agent = os.environ.get("THREADLESS_AGENT")
        if not agent:
            return
        if self.conversation_id is None:
            with self.client.post(
                f"/v1/agents/{agent}/conversations",
                json={},
                headers=self.headers,
                name="create conversation",
                catch_response=True,
            ) as r:
                if r.status_code != 201:
                    COUNTS["errors"] += 1
                    r.failure(f"create conversation answered {r.status_code}")
                    return
                self.conversation_id = r.json()["id"]
        self.turns += 1
        with self.client.post(
            f"/v1/conversations/{self.conversation_id}/say",
            json={"input": f"My name is User {self.n}; this is message {self.turns}."},
            headers=self.headers,
            name="say",
            catch_response=True,
        ) as r:
            if r.status_code != 200:
                COUNTS["errors"] += 1
                r.failure(f"say answered {r.status_code}")
                return
            COUNTS["say_ok"] += 1
