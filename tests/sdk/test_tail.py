"""The local tail: refreshed from every successful decorate, cut like the server cuts, LRU-bounded,
extended by successful reports, and what a fallback is built from."""

from __future__ import annotations

import threading

from threadless import AsyncThreadless, Threadless
from threadless.window import fit_window, message_tokens

from .faults import Hang, Respond, echo_decorate, error_body


class Service:
    """A switchable stand-in for Threadless: up (answers like the server) or down (503)."""

    def __init__(self, context_text: str = "## What you know\n- The user has a beagle.") -> None:
        self.up = True
        self.context_text = context_text
        self.history: dict[str, list] = {}  # memory id -> history the next decorate answers with
        self.report_status = 202
        self.report_delay = 0.0
        self.report_answered = threading.Event()
        self.report_seen_before_decorate: list[bool] = []

    def __call__(self, request):
        if not self.up:
            return Respond(503, error_body("unavailable", "Down for a moment."), {"Retry-After": "1"})
        memory_id = request.path.split("/")[3]
        if request.path.endswith("/report"):
            if self.report_delay:
                threading.Event().wait(self.report_delay)
            if self.report_status != 202:
                return Respond(self.report_status, error_body("internal", "oops"))
            self.report_answered.set()
            return Respond(202, {"accepted": len(request.body["messages"]), "turn": 1})
        self.report_seen_before_decorate.append(self.report_answered.is_set())
        answer = echo_decorate(request, self.context_text)
        answer.body["messages"] = self.history.get(memory_id, []) + answer.body["messages"]
        return answer


def user(text):
    return {"role": "user", "content": text}


def assistant(text):
    return {"role": "assistant", "content": text}


def client(fault, errors, **kwargs) -> Threadless:
    return Threadless(api_key="k", base_url=fault.url, timeout=2, on_error=errors, **kwargs)


def test_fallback_is_the_tail_of_the_last_successful_decorate_plus_the_new_messages(fault, errors):
    fault.responder = service = Service()
    service.history["mem_1"] = [user("I have a beagle."), assistant("Lovely!")]
    with client(fault, errors) as memory:
        ok = memory.decorate("mem_1", [user("What's his name?")], instructions="Be kind.")
        assert not ok.degraded
        assert ok.instructions == "Be kind.\n\n" + service.context_text
        service.up = False
        down = memory.decorate("mem_1", [user("Are you there?")])
    assert down.degraded
    assert down.instructions == ok.instructions  # facts block included, as we last sent it
    assert down.context_text == service.context_text
    assert down.messages == ok.messages + [user("Are you there?")]
    assert errors.contexts == [{"operation": "decorate", "memory_id": "mem_1"}]


def test_new_instructions_replace_the_tails_own_part_but_keep_its_context(fault, errors):
    fault.responder = service = Service()
    with client(fault, errors) as memory:
        memory.decorate("mem_1", [user("hi")], instructions="Old rules.")
        service.up = False
        down = memory.decorate("mem_1", [user("again")], instructions="New rules.")
        system = memory.decorate("mem_1", [{"role": "system", "content": "System rules."}, user("x")])
    assert down.instructions == "New rules.\n\n" + service.context_text
    assert system.instructions == "System rules.\n\n" + service.context_text
    assert all(m["role"] != "system" for m in system.messages)


def test_every_successful_decorate_refreshes_the_tail(fault, errors):
    fault.responder = service = Service()
    with client(fault, errors) as memory:
        memory.decorate("mem_1", [user("one")], instructions="A")
        service.context_text = "## What you know\n- Newer fact."
        service.history["mem_1"] = [user("one"), assistant("1")]
        second = memory.decorate("mem_1", [user("two")], instructions="B")
        service.up = False
        down = memory.decorate("mem_1", [user("three")])
    assert down.instructions == "B\n\n## What you know\n- Newer fact."
    assert down.messages == second.messages + [user("three")]


def test_the_tail_is_cut_at_a_user_message_so_a_tool_call_keeps_its_result(fault, errors):
    fault.responder = service = Service(context_text="")
    call = {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "x"}'}}
    history = [
        user("old question " + "x" * 400),
        assistant("old answer " + "y" * 400),
        user("look it up"),
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "result " + "z" * 100},
        assistant("found it"),
    ]
    service.history["mem_1"] = history
    new = [user("thanks")]
    # Room for the newest turn plus the tool exchange, not for the old 200-token turn.
    budget = sum(message_tokens(m) for m in history[2:] + new) + 20
    with client(fault, errors, tail_tokens=budget) as memory:
        ok = memory.decorate("mem_1", new)
        service.up = False
        down = memory.decorate("mem_1", [user("next")])
    kept = down.messages[:-1]
    assert kept == ok.messages[fit_window(ok.messages, (), budget) :]
    assert kept == history[2:] + new
    assert kept[0]["role"] == "user"


def test_when_not_one_turn_fits_the_tail_keeps_the_newest_user_message_onward(fault, errors):
    fault.responder = service = Service(context_text="")
    service.history["mem_1"] = [user("a"), assistant("b")]
    huge = assistant("w" * 4000)  # ~1,000 tokens, over the whole tail budget
    with client(fault, errors, tail_tokens=200) as memory:
        memory.decorate("mem_1", [user("tell me everything"), huge])
        service.up = False
        down = memory.decorate("mem_1", [user("more")])
    assert down.messages == [user("tell me everything"), huge, user("more")]


def test_a_restarted_process_has_no_tail(fault, errors):
    fault.responder = service = Service()
    service.history["mem_1"] = [user("earlier"), assistant("reply")]
    with client(fault, errors) as memory:
        memory.decorate("mem_1", [user("hi")], instructions="Rules.")
    service.up = False
    with client(fault, errors) as restarted:
        down = restarted.decorate("mem_1", [user("hello again")], instructions="Rules.")
        bare = restarted.decorate("mem_2", [user("no instructions")])
    assert down.degraded
    assert down.instructions == "Rules."
    assert down.messages == [user("hello again")]
    assert bare.instructions == "" and bare.messages == [user("no instructions")]


def test_tails_are_kept_for_the_200_most_recently_used_memories(fault, errors):
    fault.responder = service = Service(context_text="")
    with client(fault, errors) as memory:
        assert memory.max_tails == 200
        for i in range(201):
            memory.decorate(f"mem_{i}", [user(f"hi {i}")], instructions=f"I am {i}")
        service.up = False
        evicted = memory.decorate("mem_0", [user("?")])
        kept = memory.decorate("mem_1", [user("?")])
        newest = memory.decorate("mem_200", [user("?")])
    assert evicted.instructions == "" and evicted.messages == [user("?")]
    assert kept.instructions == "I am 1" and kept.messages == [user("hi 1"), user("?")]
    assert newest.messages == [user("hi 200"), user("?")]


def test_using_a_tail_makes_it_recent(fault, errors):
    fault.responder = service = Service(context_text="")
    with client(fault, errors, max_tails=2) as memory:
        memory.decorate("a", [user("a")])
        memory.decorate("b", [user("b")])
        memory.decorate("a", [user("a2")])  # a is now the most recent
        memory.decorate("c", [user("c")])  # evicts b
        service.up = False
        assert memory.decorate("a", [user("?")]).messages == [user("a2"), user("?")]
        assert memory.decorate("b", [user("?")]).messages == [user("?")]


def test_a_successful_report_appends_the_reply_to_the_tail(fault, errors):
    fault.responder = service = Service(context_text="")
    with client(fault, errors) as memory:
        memory.decorate("mem_1", [user("hi")])
        memory.report("mem_1", [assistant("hello!")])
        assert memory.flush(5)
        service.up = False
        down = memory.decorate("mem_1", [user("still there?")])
    assert down.messages == [user("hi"), assistant("hello!"), user("still there?")]
    assert errors.contexts == [{"operation": "decorate", "memory_id": "mem_1"}]


def test_a_failed_report_does_not_change_the_tail(fault, errors):
    fault.responder = service = Service(context_text="")
    service.report_status = 500
    with client(fault, errors) as memory:
        memory.decorate("mem_1", [user("hi")])
        memory.report("mem_1", [assistant("lost")])
        assert memory.flush(5)
        service.up = False
        down = memory.decorate("mem_1", [user("?")])
    assert down.messages == [user("hi"), user("?")]
    assert [c["operation"] for c in errors.contexts] == ["report", "decorate"]


def test_a_report_after_a_degraded_decorate_is_skipped_until_the_next_success(fault, errors):
    fault.responder = service = Service(context_text="")
    service.up = False
    with client(fault, errors) as memory:
        assert memory.decorate("mem_1", [user("hi")]).degraded
        memory.report("mem_1", [assistant("offline reply")])
        assert memory.flush(5)
        service.up = True
        memory.report("mem_1", [assistant("still skipped")])  # no successful decorate yet
        memory.flush(5)
        assert fault.paths("POST").count("/v1/memories/mem_1/report") == 0
        assert not memory.decorate("mem_1", [user("back")]).degraded
        memory.report("mem_1", [assistant("sent")])
        assert memory.flush(5)
    reports = [r.body for r in fault.requests if r.path.endswith("/report")]
    assert reports == [{"messages": [assistant("sent")]}]
    assert errors.contexts == [{"operation": "decorate", "memory_id": "mem_1"}]  # skipping is no error


def test_decorate_waits_for_a_report_in_flight_on_the_same_memory(fault, errors):
    fault.responder = service = Service(context_text="")
    service.report_delay = 0.4
    with client(fault, errors) as memory:
        memory.decorate("mem_1", [user("hi")])
        memory.report("mem_1", [assistant("hello")])
        memory.decorate("mem_1", [user("next")])
    assert service.report_seen_before_decorate == [False, True]


def test_decorate_stops_waiting_for_a_stuck_report_after_two_seconds(fault, errors):
    def responder(request):
        return Hang(30) if request.path.endswith("/report") else echo_decorate(request)

    fault.responder = responder
    with Threadless(api_key="k", base_url=fault.url, timeout=10, on_error=errors) as memory:
        memory.decorate("mem_1", [user("hi")])
        memory.report("mem_1", [assistant("hello")])
        assert not memory.decorate("mem_1", [user("next")]).degraded
        assert not memory.flush(0.1)  # the report is still out there
        memory.close(timeout=0)  # do not wait out the stuck report


def test_delete_forgets_the_tail(fault, errors):
    def responder(request):
        if request.method == "DELETE":
            return Respond(204)
        return echo_decorate(request) if service.up else Respond(503, error_body("unavailable", "x"))

    service = Service()
    fault.responder = responder
    with client(fault, errors) as memory:
        memory.decorate("mem_1", [user("hi")], instructions="R")
        memory.delete("mem_1")
        service.up = False
        assert memory.decorate("mem_1", [user("?")]).messages == [user("?")]


def test_each_thread_of_a_memory_has_its_own_tail(fault, errors):
    fault.responder = service = Service(context_text="CTX")
    with client(fault, errors) as memory:
        memory.decorate("mem_1", [user("in a")], thread="a", instructions="R")
        memory.report("mem_1", [assistant("reply in a")], thread="a")
        memory.decorate("mem_1", [user("in b")], thread="b", instructions="R")
        memory.decorate("mem_1", [user("in default")], instructions="R")
        assert memory.flush(5)
        service.up = False
        in_b = memory.decorate("mem_1", [user("b?")], thread="b")
        in_new = memory.decorate("mem_1", [user("c?")], thread="c")
        in_default = memory.decorate("mem_1", [user("?")], thread="default")
        service.up = True
        memory.report("mem_1", [assistant("skipped: b fell back")], thread="b")
        memory.report("mem_1", [assistant("sent: a did not")], thread="a")
        assert memory.flush(5)
        service.up = False
        in_a = memory.decorate("mem_1", [user("a?")], thread="a")
    assert in_b.degraded and in_b.thread == "b"
    assert in_b.messages == [user("in b"), user("b?")]  # never another thread's messages
    assert in_b.instructions == "R\n\nCTX"
    assert in_new.messages == [user("c?")] and in_new.instructions == ""
    assert in_default.messages == [user("in default"), user("?")]  # "default" is the memory's own
    assert in_a.messages == [user("in a"), assistant("reply in a"), assistant("sent: a did not"), user("a?")]
    reports = [r.body for r in fault.requests if r.path.endswith("/report")]
    assert reports == [
        {"messages": [assistant("reply in a")], "thread": "a"},
        {"messages": [assistant("sent: a did not")], "thread": "a"},
    ]
    assert [c.get("thread") for c in errors.contexts] == ["b", "c", "default", "a"]


def test_deleting_a_thread_forgets_its_tail_and_deleting_the_memory_every_threads(fault, errors):
    def responder(request):
        if request.method == "DELETE":
            return Respond(200, {"deleted": {"threads": 1}}) if "/threads/" in request.path else Respond(204)
        return echo_decorate(request) if service.up else Respond(503, error_body("unavailable", "x"))

    service = Service()
    fault.responder = responder
    with client(fault, errors) as memory:
        for thread in ("a", "b", "c"):
            memory.decorate("mem_1", [user(f"in {thread}")], thread=thread)
        assert memory.threads.delete("mem_1", "a") == {"threads": 1}
        service.up = False
        assert memory.decorate("mem_1", [user("?")], thread="a").messages == [user("?")]
        assert memory.decorate("mem_1", [user("?")], thread="b").messages == [user("in b"), user("?")]
        memory.delete("mem_1")
        assert memory.decorate("mem_1", [user("?")], thread="c").messages == [user("?")]
    assert fault.paths("DELETE") == ["/v1/memories/mem_1/threads/a", "/v1/memories/mem_1"]


async def test_async_client_keeps_the_same_tail_rules(fault, errors):
    fault.responder = service = Service(context_text="CTX")
    async with AsyncThreadless(api_key="k", base_url=fault.url, timeout=2, on_error=errors) as memory:
        await memory.decorate("mem_1", [user("hi")], instructions="Own")
        await memory.report("mem_1", [assistant("hello")])
        service.up = False
        down = await memory.decorate("mem_1", [user("?")], instructions="New")
        skipped = memory.report("mem_1", [assistant("offline")])
        assert skipped is None
        assert await memory.flush(5)
    assert down.instructions == "New\n\nCTX"
    assert down.messages == [user("hi"), assistant("hello"), user("?")]
    assert fault.paths("POST").count("/v1/memories/mem_1/report") == 1
    assert errors.contexts == [{"operation": "decorate", "memory_id": "mem_1"}]


async def test_async_decorate_waits_for_a_report_in_flight(fault, errors):
    fault.responder = service = Service(context_text="")
    service.report_delay = 0.4
    async with AsyncThreadless(api_key="k", base_url=fault.url, timeout=2, on_error=errors) as memory:
        await memory.decorate("mem_1", [user("hi")])
        memory.report("mem_1", [assistant("hello")])
        await memory.decorate("mem_1", [user("next")])
    assert service.report_seen_before_decorate == [False, True]


def test_a_dry_run_refreshes_the_tail_but_does_not_end_a_degraded_state(fault, errors):
    fault.responder = service = Service(context_text="")
    with client(fault, errors) as memory:
        service.up = False
        assert memory.decorate("mem_1", [user("offline")], instructions="A").degraded
        service.up = True
        dry = memory.decorate("mem_1", [user("what if")], instructions="B", store=False)
        assert fault.requests[-1].body["store"] is False
        memory.report("mem_1", [assistant("still skipped")])
        assert memory.flush(5)
        assert not any(r.path.endswith("/report") for r in fault.requests)
        service.up = False
        down = memory.decorate("mem_1", [user("?")])
    assert down.instructions == "B"
    assert down.messages == dry.messages + [user("?")]


def test_reports_still_in_flight_are_sent_at_interpreter_exit(fault):
    """A script that reports and exits without flush() or close() still delivers the report."""
    import subprocess
    import sys

    fault.responder = service = Service(context_text="")
    service.report_delay = 0.3
    script = (
        "from threadless import Threadless\n"
        f"memory = Threadless(api_key='k', base_url={fault.url!r}, timeout=5)\n"
        "memory.decorate('mem_exit', [{'role': 'user', 'content': 'hi'}])\n"
        "memory.report('mem_exit', [{'role': 'assistant', 'content': 'bye'}])\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert service.report_answered.is_set()
    assert [r.body for r in fault.requests if r.path.endswith("/report")] == [
        {"messages": [{"role": "assistant", "content": "bye"}]}
    ]
