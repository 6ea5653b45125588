// decorate/report by { externalId }, the newest decorate winning the tail, and reportOpenAI /
// reportAnthropic, against the local fault server (real sockets).
import { after, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Threadless, ThreadlessError } from "threadless";
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
  return new Threadless({ apiKey: "tl_proj_test", baseUrl: server.url, timeoutMs: 5_000, onError: (error, context) => calls.push({ error, context }), ...options });
}

const user = (content) => ({ role: "user", content });
const assistant = (content) => ({ role: "assistant", content });

describe("a memory named by your own id (externalId)", () => {
  test("a brand-new user during an outage still gets a request from decorate", async () => {
    const memory = client({ baseUrl: `http://127.0.0.1:${await refusedPort()}` });
    const req = await memory.decorate({ externalId: "user-42" }, { messages: [user("Hi, I'm Ada.")], instructions: "Be kind." });
    assert.equal(req.degraded, true);
    assert.equal(req.instructions, "Be kind.");
    assert.deepEqual(req.messages, [user("Hi, I'm Ada.")]);
    assert.equal(req.memoryId, null);
    assert.equal(req.externalId, "user-42");
    assert.deepEqual(calls.map((c) => c.context), [{ operation: "decorate", memoryId: null, externalId: "user-42" }]);
    // The reply to a turn that was never stored is skipped, silently.
    assert.equal(await memory.report({ externalId: "user-42" }, { messages: [assistant("Hello Ada!")] }), null);
    assert.equal(calls.length, 1);
  });

  test("decorate and report use the get-or-create routes, and the tail is keyed by the external id", async () => {
    const memory = client();
    const ref = { externalId: "tenant/ü 1" };
    const first = await memory.decorate(ref, { messages: [user("one")], instructions: "Be kind." });
    assert.equal(first.memoryId, "mem_tenant%2F%C3%BC%201");
    await memory.report(ref, { messages: [assistant("reply")] });
    assert.deepEqual(server.requests.map((r) => r.url), [
      "/v1/memories/external/tenant%2F%C3%BC%201/decorate",
      "/v1/memories/external/tenant%2F%C3%BC%201/report",
    ]);
    server.modes.decorate = "503";
    const down = await memory.decorate(ref, { messages: [user("two")] });
    assert.equal(down.degraded, true);
    assert.equal(down.memoryId, first.memoryId, "learnt from the successful decorate");
    assert.deepEqual(down.messages.map((m) => m.content), ["one", "reply", "two"]);
  });

  test("an empty external id is the caller's bug: decorate throws, report tells onError", async () => {
    const memory = client();
    await assert.rejects(memory.decorate({ externalId: "" }, { messages: [user("x")] }), (e) => e instanceof ThreadlessError && e.code === "invalid_request");
    assert.equal(await memory.report({ externalId: "" }, { messages: [assistant("x")] }), null);
    assert.deepEqual(calls.map((c) => c.error.code), ["invalid_request"]);
  });
});

describe("the newest decorate wins the tail", () => {
  test("a slow older answer never replaces the tail of a newer one", async () => {
    const memory = client();
    server.decorateDelayMs = (record) => (record.body.messages.at(-1)?.content === "old" ? 300 : 0);
    const slow = memory.decorate("mem_race", { messages: [user("old")] });
    while (!server.requests.length) await new Promise((resolve) => setTimeout(resolve, 10));
    const fresh = await memory.decorate("mem_race", { messages: [user("new")] });
    assert.equal(fresh.degraded, false);
    assert.equal((await slow).degraded, false, "the older caller still gets its own answer");
    server.modes.decorate = "503";
    const down = await memory.decorate("mem_race", { messages: [user("third")] });
    // The fault server answers "new" first (history [new]), then the held one ([new, old]): the
    // tail must stay the newer decorate's.
    assert.deepEqual(down.messages.map((m) => m.content), ["new", "third"]);
  });
});

describe("an unplanned error inside decorate", () => {
  test("falls back like a network error (a custom fetch with a bug)", async () => {
    // A Response-like object without headers: reading the request id of its broken body throws a TypeError.
    const memory = client({ fetch: async () => ({ ok: true, status: 200, text: async () => "not json" }) });
    const req = await memory.decorate("mem_bug", { messages: [user("hi")], instructions: "Be kind." });
    assert.equal(req.degraded, true);
    assert.deepEqual([req.instructions, req.messages], ["Be kind.", [user("hi")]]);
    assert.deepEqual(calls.map((c) => [c.error.code, c.error.retryable]), [["client_error", true]]);
    assert.ok(calls[0].error.cause instanceof TypeError);
  });
});

const completion = (message) => ({
  id: "chatcmpl-1", object: "chat.completion", created: 1_700_000_000, model: "gpt-4o-mini",
  choices: [{ index: 0, finish_reason: "stop", logprobs: null, message: { role: "assistant", refusal: null, annotations: [], audio: null, function_call: null, ...message } }],
});
const weather = { id: "call_1", type: "function", function: { name: "weather", arguments: '{"city":"Lyon"}' } };

describe("provider replies as they are", () => {
  test("reportOpenAI sends the assistant message of a chat completion", async () => {
    const memory = client();
    await memory.reportOpenAI("mem_o", completion({ content: "Hello!" }));
    await memory.reportOpenAI("mem_o", completion({ content: null, tool_calls: [weather] }).choices[0].message);
    await memory.reportOpenAI("mem_o", completion({ content: null, refusal: "I can't help with that." }));
    assert.deepEqual(server.operations("report").map((r) => r.body.messages), [
      [assistant("Hello!")],
      [{ role: "assistant", content: "", tool_calls: [weather] }],
      [assistant("I can't help with that.")],
    ]);
    assert.equal(calls.length, 0);
  });

  test("reportAnthropic sends text and tool_use blocks and leaves thinking out", async () => {
    const memory = client();
    const message = {
      id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-5", stop_reason: "tool_use", stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 2 },
      content: [
        { type: "thinking", thinking: "The user wants weather.", signature: "sig" },
        { type: "text", text: "Let me check.", citations: null },
        { type: "tool_use", id: "toolu_1", name: "weather", input: { city: "Lyon" } },
      ],
    };
    await memory.reportAnthropic({ externalId: "u1" }, message);
    assert.deepEqual(server.operations("report")[0].body.messages, [
      { role: "assistant", content: "Let me check.", tool_calls: [{ id: "toolu_1", type: "function", function: { name: "weather", arguments: '{"city":"Lyon"}' } }] },
    ]);
  });

  test("something that is not a provider answer goes to onError and never rejects", async () => {
    const memory = client();
    assert.equal(await memory.reportOpenAI("mem_o", "Hello!"), null);
    assert.equal(await memory.reportAnthropic("mem_o", 42), null);
    assert.deepEqual(calls.map((c) => [c.context.operation, c.error.code]), [["report", "invalid_request"], ["report", "invalid_request"]]);
    assert.equal(server.requests.length, 0);
  });
});
