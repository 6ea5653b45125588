// Failure behaviour against a local fault-injection server (real sockets): which answers fall back
// to the local tail, which throw, what onError hears, and what the tail holds.
import { after, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Threadless, ThreadlessError, messageTokens } from "threadless";
import { FaultServer, refusedPort } from "./fault-server.mjs";

let server;
let calls;

before(async () => {
  server = await new FaultServer().start();
});
after(async () => {
  await server.close();
});
beforeEach(() => {
  server.reset();
  calls = [];
});

function client(options = {}) {
  return new Threadless({
    apiKey: "tl_proj_test",
    baseUrl: server.url,
    timeoutMs: 10_000,
    onError: (error, context) => calls.push({ error, context }),
    ...options,
  });
}

const user = (content) => ({ role: "user", content });
const assistant = (content) => ({ role: "assistant", content });

describe("decorate falls back to the local tail", () => {
  const faults = [
    ["a hanging server (timeout)", "hang", null, "timeout"],
    ["a body that trickles past the deadline", "slow-body", null, "timeout"],
    ["a connection dropped mid-body", "drop", null, "connection_error"],
    ["500 with the error shape", "500", 500, "internal"],
    ["502 from a proxy, in HTML", "502", 502, "bad_gateway"],
    ["503 unavailable", "503", 503, "unavailable"],
    ["429 rate limited", "429", 429, "rate_limited"],
    ["429 quota exceeded", "429-quota", 429, "quota_exceeded"],
    ["408 request timeout", "408", 408, "request_timeout"],
    ["200 with invalid JSON", "invalid-json", 200, "invalid_response"],
  ];
  for (const [name, mode, status, code] of faults) {
    test(`on ${name}`, async () => {
      server.modes.decorate = mode;
      const memory = client(code === "timeout" ? { timeoutMs: 500 } : {});
      const req = await memory.decorate("mem_f", { messages: [user("hi")], instructions: "Be brief." });
      assert.equal(req.degraded, true);
      assert.equal(req.instructions, "Be brief.");
      assert.deepEqual(req.messages, [user("hi")]);
      assert.equal(req.turn, null);
      assert.equal(calls.length, 1, "onError is told exactly once");
      assert.deepEqual(calls[0].context, { operation: "decorate", memoryId: "mem_f" });
      const error = calls[0].error;
      assert.ok(error instanceof ThreadlessError);
      assert.equal(error.status, status);
      assert.equal(error.code, code);
      assert.equal(error.retryable, true);
      assert.equal(req.error, error);
      if (mode === "429") assert.equal(error.retryAfter, 7);
      if (mode === "500") assert.match(error.requestId, /^req_fault/);
    });
  }

  test("on a refused connection", async () => {
    const memory = client({ baseUrl: `http://127.0.0.1:${await refusedPort()}` });
    const req = await memory.decorate("mem_r", { messages: [user("hi")] });
    assert.equal(req.degraded, true);
    assert.equal(calls.length, 1);
    assert.equal(calls[0].error.code, "connection_error");
    assert.equal(calls[0].error.status, null);
    assert.match(calls[0].error.message, /ECONNREFUSED/);
  });

  test("an onError that throws, or rejects, never reaches the caller", async () => {
    server.modes.decorate = "500";
    const throwing = client({ onError: () => { throw new Error("logger broke"); } });
    assert.equal((await throwing.decorate("mem_t", { messages: [user("hi")] })).degraded, true);
    const rejecting = client({ onError: async () => { throw new Error("async logger broke"); } });
    assert.equal((await rejecting.decorate("mem_t", { messages: [user("hi")] })).degraded, true);
    const none = client({ onError: null });
    assert.equal((await none.decorate("mem_t", { messages: [user("hi")] })).degraded, true);
  });
});

describe("decorate throws ThreadlessError on other 4xx", () => {
  for (const status of [400, 401, 404]) {
    test(`on ${status} with the error shape`, async () => {
      server.modes.decorate = String(status);
      const memory = client();
      await assert.rejects(memory.decorate("mem_4", { messages: [user("hi")] }), (error) => {
        assert.ok(error instanceof ThreadlessError);
        assert.equal(error.status, status);
        assert.equal(error.code, { 400: "invalid_request", 401: "unauthorized", 404: "not_found" }[status]);
        assert.ok(error.message.length > 5);
        assert.ok(error.hint.length > 5);
        assert.match(error.requestId, /^req_fault/);
        assert.equal(error.retryable, false);
        return true;
      });
      assert.equal(calls.length, 0, "a bug to see is not a fallback");
    });
  }

  test("on a 404 that is not the error shape", async () => {
    server.modes.decorate = "404-plain";
    await assert.rejects(client().decorate("mem_4", { messages: [user("hi")] }), (error) => {
      assert.ok(error instanceof ThreadlessError);
      assert.equal(error.status, 404);
      assert.equal(error.code, "not_found");
      assert.match(error.message, /HTTP 404.*Not Found/);
      assert.ok(error.hint);
      return true;
    });
  });

  test("a bad memory id or messages are refused before any request", async () => {
    const invalid = (error) => error instanceof ThreadlessError && error.code === "invalid_request" && error.status === null;
    await assert.rejects(client().decorate("", { messages: [] }), invalid);
    await assert.rejects(client().decorate("mem_x", { messages: "hi" }), invalid);
    await assert.rejects(client().decorate("mem_x", { messages: [{ role: "user", content: 1n }] }), invalid);
    assert.equal(server.requests.length, 0);
    assert.throws(() => client({ baseUrl: "127.0.0.1:8000" }), invalid);
    assert.throws(() => client({ timeoutMs: 0 }), invalid);
  });
});

describe("the request on the wire", () => {
  test("carries the key, the idempotency key and snake_case fields, under /v1", async () => {
    const memory = client({ baseUrl: server.url + "/v1/" });
    const req = await memory.decorate("mem_w", {
      messages: [user("hi")], instructions: "I", budgetTokens: 1000, recall: false, idempotencyKey: "turn-1",
    });
    assert.equal(req.degraded, false);
    const [sent] = server.requests;
    assert.equal(sent.url, "/v1/memories/mem_w/decorate");
    assert.equal(sent.headers.authorization, "Bearer tl_proj_test");
    assert.equal(sent.headers["idempotency-key"], "turn-1");
    assert.deepEqual(sent.body, { messages: [user("hi")], instructions: "I", budget_tokens: 1000, recall: false });
    memory.report("mem_w", { messages: [assistant("hello")], idempotencyKey: "turn-1-report" });
    assert.equal(await memory.flush(), true);
    assert.equal(server.operations("report")[0].headers["idempotency-key"], "turn-1-report");
  });

  test("apiKey and baseUrl default from the environment", async () => {
    process.env.THREADLESS_API_KEY = "tl_proj_env";
    process.env.THREADLESS_BASE_URL = server.url;
    try {
      const memory = new Threadless({ onError: null });
      await memory.get("mem_env");
      assert.equal(server.requests[0].headers.authorization, "Bearer tl_proj_env");
      assert.equal(server.requests[0].url, "/v1/memories/mem_env");
    } finally {
      delete process.env.THREADLESS_API_KEY;
      delete process.env.THREADLESS_BASE_URL;
    }
    assert.throws(() => new Threadless(), (error) => error instanceof ThreadlessError && error.code === "missing_api_key");
  });

  test("other methods throw on network errors instead of falling back", async () => {
    const memory = client({ baseUrl: `http://127.0.0.1:${await refusedPort()}` });
    await assert.rejects(memory.get("mem_x"), (error) => error instanceof ThreadlessError && error.code === "connection_error");
    server.modes.other = "hang";
    await assert.rejects(client({ timeoutMs: 200 }).create(), (error) => error.code === "timeout");
  });
});

describe("the tail", () => {
  test("no tail: the new instructions and new messages", async () => {
    server.modes.decorate = "503";
    const req = await client().decorate("mem_none", { messages: [{ role: "system", content: "From system." }, user("hi")] });
    assert.equal(req.instructions, "From system.");
    assert.deepEqual(req.messages, [user("hi")]);
    const bare = await client().decorate("mem_none", { messages: [user("hi")] });
    assert.equal(bare.instructions, "");
  });

  test("is refreshed from every successful decorate, context included", async () => {
    const memory = client();
    server.contextText = "What you know:\n- The user likes tea.";
    const ok = await memory.decorate("mem_a", { messages: [user("one")], instructions: "Be kind." });
    assert.equal(ok.instructions, "Be kind.\n\nWhat you know:\n- The user likes tea.");
    server.modes.decorate = "500";
    const down = await memory.decorate("mem_a", { messages: [user("two")] });
    assert.equal(down.degraded, true);
    assert.equal(down.instructions, "Be kind.\n\nWhat you know:\n- The user likes tea.");
    assert.equal(down.contextText, "What you know:\n- The user likes tea.");
    assert.deepEqual(down.messages, [user("one"), user("two")]);
    // The failed decorate left the tail alone; new instructions replace only the caller's part.
    const renamed = await memory.decorate("mem_a", { messages: [user("three")], instructions: "Be terse." });
    assert.equal(renamed.instructions, "Be terse.\n\nWhat you know:\n- The user likes tea.");
    assert.deepEqual(renamed.messages, [user("one"), user("three")]);
    const fromSystem = await memory.decorate("mem_a", { messages: [{ role: "system", content: "Sys." }, user("four")] });
    assert.equal(fromSystem.instructions, "Sys.\n\nWhat you know:\n- The user likes tea.");
  });

  test("is a copy: changing the returned request does not change the tail", async () => {
    const memory = client();
    const req = await memory.decorate("mem_copy", { messages: [user("hi")] });
    req.messages.push(assistant("pushed by the caller"));
    server.modes.decorate = "500";
    assert.deepEqual((await memory.decorate("mem_copy", { messages: [user("next")] })).messages, [user("hi"), user("next")]);
  });

  test("keeps the newest history within tailTokens, cut at a user message", async () => {
    const turns = [
      user("a".repeat(400)), assistant("b".repeat(40)),
      user("c".repeat(40)),
      { role: "assistant", content: "", tool_calls: [{ id: "t1", type: "function", function: { name: "f", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "t1", content: "r".repeat(40) },
      assistant("d".repeat(40)),
    ];
    const recent = turns.slice(2);
    const budget = recent.reduce((sum, m) => sum + messageTokens(m), 0) + 5; // the last turn and a bit, never the first
    const memory = client({ tailTokens: budget });
    server.history.set("mem_cut", turns.slice(0, 5));
    await memory.decorate("mem_cut", { messages: [turns[5]] });
    server.modes.decorate = "500";
    const down = await memory.decorate("mem_cut", { messages: [user("next")] });
    assert.deepEqual(down.messages, [...recent, user("next")]);
    assert.equal(down.messages[0].role, "user", "a tool call never loses its output");
  });

  test("keeps the newest user message onward when not one turn fits", async () => {
    const memory = client({ tailTokens: 10 });
    const big = [user("old"), assistant("x"), user("u".repeat(400)), assistant("v".repeat(400))];
    server.history.set("mem_big", big.slice(0, 3));
    await memory.decorate("mem_big", { messages: [big[3]] });
    server.modes.decorate = "500";
    const down = await memory.decorate("mem_big", { messages: [user("next")] });
    assert.deepEqual(down.messages, [big[2], big[3], user("next")]);
  });

  test("holds the maxTails most recently used memories", async () => {
    const memory = client({ maxTails: 3 });
    for (const id of ["m1", "m2", "m3"]) await memory.decorate(id, { messages: [user(`in ${id}`)], instructions: id });
    await memory.decorate("m1", { messages: [user("again")] }); // m1 is now the most recently used
    await memory.decorate("m4", { messages: [user("in m4")], instructions: "m4" }); // maxTails + 1: m2 goes
    server.modes.decorate = "500";
    const kept = await memory.decorate("m1", { messages: [user("back")] });
    assert.deepEqual(kept.messages, [user("in m1"), user("again"), user("back")]);
    assert.equal(kept.instructions, "m1");
    for (const id of ["m3", "m4"]) {
      assert.equal((await memory.decorate(id, { messages: [user("back")] })).instructions, id);
    }
    const evicted = await memory.decorate("m2", { messages: [user("back")] });
    assert.deepEqual(evicted.messages, [user("back")]);
    assert.equal(evicted.instructions, "");
  });

  test("a dry run (store: false) mirrors its answer but does not end a degraded state", async () => {
    const memory = client();
    await memory.decorate("mem_dry", { messages: [user("stored")] });
    server.modes.decorate = "500";
    await memory.decorate("mem_dry", { messages: [user("lost")] });
    server.modes.decorate = "ok";
    await memory.decorate("mem_dry", { messages: [user("trying")], store: false });
    assert.equal(await memory.report("mem_dry", { messages: [assistant("skipped")] }), null);
    assert.equal(server.operations("report").length, 0);
    server.modes.decorate = "500";
    const down = await memory.decorate("mem_dry", { messages: [user("next")] });
    assert.deepEqual(down.messages, [user("stored"), user("trying"), user("next")]);
  });

  test("is kept per memory and thread: a fallback in one thread never shows another's", async () => {
    const memory = client();
    await memory.decorate("mem_t", { thread: "a", messages: [user("in a")] });
    await memory.report("mem_t", { thread: "a", messages: [assistant("reply in a")] });
    await memory.decorate("mem_t", { thread: "b", messages: [user("in b")] });
    await memory.decorate("mem_t", { messages: [user("in default")] });
    assert.deepEqual(server.operations("decorate").map((r) => r.body.thread), ["a", "b", undefined], "no thread: none sent");
    server.modes.decorate = "503";
    const b = await memory.decorate("mem_t", { thread: "b", messages: [user("b again")] });
    assert.deepEqual([b.degraded, b.thread, b.messages], [true, "b", [user("in b"), user("b again")]]);
    assert.deepEqual(calls.map((c) => c.context), [{ operation: "decorate", memoryId: "mem_t", thread: "b" }]);
    const a = await memory.decorate("mem_t", { thread: "a", messages: [user("a again")] });
    assert.deepEqual(a.messages, [user("in a"), assistant("reply in a"), user("a again")]);
    const main = await memory.decorate("mem_t", { thread: "default", messages: [user("again")] });
    assert.deepEqual([main.thread, main.messages], ["default", [user("in default"), user("again")]]);
    // b's reply is skipped (its turn was never stored); deleting thread a drops a's tail.
    server.modes.decorate = "ok";
    await memory.decorate("mem_t", { thread: "a", messages: [user("a back")] });
    assert.equal(await memory.report("mem_t", { thread: "b", messages: [assistant("not stored")] }), null);
    assert.equal(server.operations("report").length, 1);
    await memory.threads.delete("mem_t", "a");
    assert.equal(server.requests.at(-1).url, "/v1/memories/mem_t/threads/a");
    server.modes.decorate = "503";
    assert.deepEqual((await memory.decorate("mem_t", { thread: "a", messages: [user("after")] })).messages, [user("after")]);
  });

  test("a failing decorate on a memory without a tail evicts no other memory's tail", async () => {
    const memory = client({ maxTails: 1 });
    await memory.decorate("kept", { messages: [user("hi")] });
    server.modes.decorate = "500";
    await memory.decorate("never-seen", { messages: [user("x")] });
    assert.deepEqual((await memory.decorate("kept", { messages: [user("again")] })).messages, [user("hi"), user("again")]);
  });
});

describe("report", () => {
  test("a successful report appends to the tail, so a fallback right after keeps the reply", async () => {
    const memory = client();
    await memory.decorate("mem_r1", { messages: [user("hi")] });
    const answer = await memory.report("mem_r1", { messages: [assistant("hello!")] });
    assert.deepEqual(answer, { accepted: 1, turn: 1 });
    server.modes.decorate = "503";
    const down = await memory.decorate("mem_r1", { messages: [user("still there?")] });
    assert.deepEqual(down.messages, [user("hi"), assistant("hello!"), user("still there?")]);
  });

  for (const mode of ["500", "400", "hang", "invalid-json"]) {
    test(`never rejects, tells onError and leaves the tail alone when it fails (${mode})`, async () => {
      const memory = client(mode === "hang" ? { timeoutMs: 1000 } : {});
      await memory.decorate("mem_r2", { messages: [user("hi")] });
      server.modes.report = mode;
      assert.equal(await memory.report("mem_r2", { messages: [assistant("lost")] }), null);
      assert.equal(calls.length, 1);
      assert.deepEqual(calls[0].context, { operation: "report", memoryId: "mem_r2" });
      assert.equal(server.operations("report").length, 1, "not retried");
      server.modes.decorate = "500";
      const down = await memory.decorate("mem_r2", { messages: [user("next")] });
      assert.deepEqual(down.messages, [user("hi"), user("next")]);
    });
  }

  test("reports on one memory go out one at a time, in order", async () => {
    const memory = client({ timeoutMs: 5000 });
    await memory.decorate("mem_o", { messages: [user("hi")] });
    server.modes.report = "slow";
    server.reportDelayMs = 150;
    const call = { role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] };
    memory.report("mem_o", { messages: [call] });
    memory.report("mem_o", { messages: [{ role: "tool", tool_call_id: "c1", content: "42" }] });
    memory.report("mem_o", { messages: [assistant("It is 42.")] });
    assert.equal(await memory.flush(), true);
    const reports = server.operations("report");
    assert.deepEqual(reports.map((r) => r.body.messages[0].role), ["assistant", "tool", "assistant"]);
    server.modes.decorate = "500";
    const down = await memory.decorate("mem_o", { messages: [user("next")] });
    assert.deepEqual(down.messages.map((m) => m.content), ["hi", "", "42", "It is 42.", "next"]);
  });

  test("a report on a memory without a tail adds no reply whose user message the tail lacks", async () => {
    const memory = client();
    assert.notEqual(await memory.report("mem_fresh", { messages: [assistant("from before the restart")] }), null);
    server.modes.decorate = "500";
    const down = await memory.decorate("mem_fresh", { messages: [user("next")] });
    assert.deepEqual(down.messages, [user("next")], "a tail always starts at a user message");
  });

  test("a report without await never produces an unhandled rejection", async () => {
    const memory = client({ baseUrl: `http://127.0.0.1:${await refusedPort()}`, onError: () => { throw new Error("x"); } });
    memory.report("mem_r3", { messages: [assistant("x")] });
    memory.report("mem_r3", { messages: [{ role: "assistant", content: 1n }] }); // not even JSON
    assert.equal(await memory.flush(), true);
  });

  test("is skipped after a degraded decorate on that memory, until the next successful one", async () => {
    const memory = client();
    await memory.decorate("mem_s", { messages: [user("hi")] });
    server.modes.decorate = "503";
    await memory.decorate("mem_s", { messages: [user("during the outage")] });
    calls = [];
    assert.equal(await memory.report("mem_s", { messages: [assistant("reply in the outage")] }), null);
    assert.equal(server.operations("report").length, 0, "not sent");
    assert.equal(calls.length, 0, "skipping is not an error");
    assert.notEqual(await memory.report("mem_other", { messages: [assistant("elsewhere")] }), null);
    server.modes.decorate = "ok";
    await memory.decorate("mem_s", { messages: [user("back")] });
    assert.deepEqual(await memory.report("mem_s", { messages: [assistant("welcome back")] }), { accepted: 1, turn: 1 });
  });

  test("a decorate waits for a report in flight on the same memory", async () => {
    const memory = client({ timeoutMs: 5000 });
    await memory.decorate("mem_w2", { messages: [user("hi")] });
    server.modes.report = "slow";
    server.reportDelayMs = 300;
    const reported = memory.report("mem_w2", { messages: [assistant("the reply")] });
    const req = await memory.decorate("mem_w2", { messages: [user("next")] });
    const [report] = server.operations("report");
    const decorates = server.operations("decorate");
    assert.equal(report.answered, true);
    assert.ok(server.requests.indexOf(report) < server.requests.indexOf(decorates[1]));
    assert.deepEqual(req.messages, [user("hi"), assistant("the reply"), user("next")]);
    await reported;
  });

  test("a decorate stops waiting for a hung report after two seconds", async () => {
    const memory = client({ timeoutMs: 10_000 });
    server.modes.report = "hang";
    const reported = memory.report("mem_w3", { messages: [assistant("stuck")] });
    const req = await memory.decorate("mem_w3", { messages: [user("next")] });
    assert.equal(req.degraded, false);
    assert.equal(server.operations("report")[0].answered, false);
    assert.equal(await memory.flush(50), false, "flush says the report is still out");
    assert.equal(memory.pendingReports, 1);
    server.modes.report = "ok";
    await server.close(); // drops the hung connection: the report fails, quietly
    assert.equal(await reported, null);
    assert.equal(await memory.flush(), true);
    server = await new FaultServer().start();
  });
});

describe("conversion", () => {
  test("toOpenAI puts the instructions first as a system message", async () => {
    const req = await client().decorate("mem_c", { messages: [user("hi")], instructions: "Be kind." });
    assert.deepEqual(req.toOpenAI(), [{ role: "system", content: "Be kind." }, user("hi")]);
    const bare = await client().decorate("mem_c0", { messages: [user("hi")] });
    assert.deepEqual(bare.toOpenAI(), [user("hi")]);
  });

  test("toAnthropic maps tool calls, tool results and images", async () => {
    server.history.set("mem_c2", [
      user([{ type: "text", text: "what is this?" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }]),
      { role: "assistant", content: "Let me look.", tool_calls: [{ id: "t1", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } }] },
      { role: "tool", tool_call_id: "t1", content: "a cat" },
    ]);
    const req = await client().decorate("mem_c2", { messages: [user("and?")], instructions: "Sys" });
    assert.deepEqual(req.toAnthropic(), {
      system: "Sys",
      messages: [
        { role: "user", content: [{ type: "text", text: "what is this?" }, { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } }] },
        { role: "assistant", content: [{ type: "text", text: "Let me look." }, { type: "tool_use", id: "t1", name: "lookup", input: { q: "x" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "a cat" }, { type: "text", text: "and?" }] },
      ],
    });
  });
});
