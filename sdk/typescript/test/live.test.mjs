// Against a real Threadless server (uvicorn + the project's database), started for this run:
// the HTTP contract end to end, the error shape, and an outage in the middle of a conversation.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Threadless, ThreadlessError } from "threadless";
import { LiveServer, liveServerAvailable } from "./live-server.mjs";

const skip = liveServerAvailable();
let live;
let calls = [];

function client(options = {}) {
  return new Threadless({
    apiKey: live.key,
    baseUrl: live.url,
    timeoutMs: 5000,
    onError: (error, context) => calls.push({ error, context }),
    ...options,
  });
}

const user = (content) => ({ role: "user", content });
const assistant = (content) => ({ role: "assistant", content });

describe("against a live Threadless server", { skip: skip ?? false }, () => {
  before(async () => {
    live = await new LiveServer().start();
  });
  after(async () => {
    await live?.close();
  });

  test("memories: create (get-or-create by external id), get, update, list, delete", async () => {
    const memory = client();
    const created = await memory.create({ metadata: { user: "42" }, externalId: "ts-user-42", instructions: "Be kind." });
    assert.match(created.id, /^mem_/);
    assert.equal(created.external_id, "ts-user-42");
    assert.equal(created.instructions, "Be kind.");
    const again = await memory.create({ externalId: "ts-user-42", metadata: { ignored: true } });
    assert.equal(again.id, created.id);
    assert.deepEqual(again.metadata, { user: "42" });
    const updated = await memory.update(created.id, { instructions: "Be brief." });
    assert.equal(updated.instructions, "Be brief.");
    const listed = await memory.list({ metadata: { user: "42" } });
    assert.deepEqual(listed.data.map((m) => m.id), [created.id]);
    assert.equal((await memory.get(created.id)).counts.messages, 0);
    await memory.delete(created.id);
    await assert.rejects(memory.get(created.id), (error) => error instanceof ThreadlessError && error.status === 404);
  });

  test("decorate, report, and the next decorate sees the reply", async () => {
    const memory = client();
    const { id } = await memory.create();
    const first = await memory.decorate(id, { messages: [user("My name is Ada.")], instructions: "You are helpful." });
    assert.equal(first.degraded, false);
    assert.equal(first.turn, 1);
    assert.equal(first.instructions, "You are helpful.");
    assert.deepEqual(first.messages, [user("My name is Ada.")]);
    assert.equal(typeof first.usage.new_tokens, "number");
    const answer = await memory.report(id, { messages: [assistant("Hello Ada!")] });
    assert.equal(answer.accepted, 1);
    const second = await memory.decorate(id, { messages: [user("What is my name?")] });
    assert.equal(second.instructions.startsWith("You are helpful."), true);
    assert.deepEqual(second.messages.map((m) => m.content), ["My name is Ada.", "Hello Ada!", "What is my name?"]);
    assert.equal(second.turn, 2);
    assert.deepEqual(second.toOpenAI()[0], { role: "system", content: second.instructions });
    const entries = await memory.entries.list(id);
    assert.deepEqual(entries.data.map((e) => e.content), ["My name is Ada.", "Hello Ada!", "What is my name?"]);
    const all = [];
    for await (const entry of memory.entries.all(id)) all.push(entry.seq);
    assert.equal(all.length, 3);
    assert.equal(calls.length, 0);
  });

  test("an idempotency key stores a retried decorate once", async () => {
    const memory = client();
    const { id } = await memory.create();
    const one = await memory.decorate(id, { messages: [user("once")], idempotencyKey: "ts-turn-1" });
    const two = await memory.decorate(id, { messages: [user("once")], idempotencyKey: "ts-turn-1" });
    assert.deepEqual(two.messages, one.messages);
    assert.equal((await memory.get(id)).counts.messages, 1);
  });

  test("facts: create, list, update, delete; the decorated instructions carry them", async () => {
    const memory = client();
    const { id } = await memory.create();
    const fact = await memory.facts.create(id, "The user prefers tea.");
    assert.equal(fact.text, "The user prefers tea.");
    const changed = await memory.facts.update(id, fact.id, "The user prefers green tea.");
    assert.equal(changed.text, "The user prefers green tea.");
    assert.deepEqual((await memory.facts.list(id)).data.map((f) => f.text), ["The user prefers green tea."]);
    const req = await memory.decorate(id, { messages: [user("hi")], instructions: "Own part." });
    assert.ok(req.contextText.includes("green tea"), req.contextText);
    assert.equal(req.instructions, "Own part.\n\n" + req.contextText);
    await memory.facts.delete(id, fact.id);
    assert.deepEqual((await memory.facts.list(id)).data, []);
  });

  test("files: a memory-tool command and the list, by memory id and by externalId", async () => {
    const memory = client();
    const ref = { externalId: `ts-files-${Date.now()}` };
    const created = await memory.files.command(ref, { command: "create", path: "/memories/dog.md", file_text: "Biscuit\n" });
    assert.deepEqual(created, { result: "File created successfully at: /memories/dog.md", is_error: false });
    const { id } = await memory.get(ref); // the command created the memory, as decorate does
    const again = await memory.files.command(id, { command: "create", path: "/memories/dog.md", file_text: "x" });
    assert.deepEqual(again, { result: "File /memories/dog.md already exists", is_error: true });
    assert.deepEqual((await memory.files.list(id)).map((f) => [f.path, f.type, f.size]), [["/memories/dog.md", "file", 8]]);
    assert.deepEqual((await memory.files.list(ref)).map((f) => f.path), ["/memories/dog.md"]);
    assert.deepEqual(await memory.files.list({ externalId: `ts-files-nobody-${Date.now()}` }), []);
    await memory.delete(ref);
  });

  test("4xx answers throw ThreadlessError with the server's code, message, hint and request id", async () => {
    const memory = client();
    await assert.rejects(memory.decorate("mem_doesnotexist", { messages: [user("hi")] }), (error) => {
      assert.ok(error instanceof ThreadlessError);
      assert.equal(error.status, 404);
      assert.equal(error.code, "not_found");
      assert.ok(error.hint);
      assert.ok(error.requestId);
      return true;
    });
    const { id } = await memory.create();
    await assert.rejects(memory.decorate(id, { messages: [{ role: "robot", content: "hi" }] }), (error) => {
      assert.equal(error.status, 400);
      assert.equal(error.code, "invalid_request");
      assert.match(error.message, /messages\[0\]\.role/);
      return true;
    });
    await assert.rejects(client({ apiKey: "tl_proj_not_a_real_key" }).decorate(id, { messages: [user("hi")] }), (error) => {
      assert.equal(error.status, 401);
      assert.equal(error.code, "unauthorized");
      return true;
    });
    assert.equal(calls.filter((c) => c.context.operation === "decorate").length, 0, "no fallback on a bug to see");
  });

  test("an outage mid-conversation: the fallback mirrors the last request, and the server picks up again", async () => {
    const memory = client({ timeoutMs: 2000 });
    const { id } = await memory.create();
    await memory.facts.create(id, "The user's dog is called Rex.");
    const ok = await memory.decorate(id, { messages: [user("Hi, I am back.")], instructions: "You are a vet's assistant." });
    await memory.report(id, { messages: [assistant("Welcome back! How is Rex?")] });
    calls = [];

    assert.equal(await live.command("stop"), "stopped");
    const down = await memory.decorate(id, { messages: [user("He is limping.")] });
    assert.equal(down.degraded, true);
    assert.equal(down.instructions, ok.instructions, "instructions and facts block as last decorated");
    assert.ok(down.instructions.includes("Rex"));
    assert.deepEqual(down.messages.map((m) => m.content), ["Hi, I am back.", "Welcome back! How is Rex?", "He is limping."]);
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0].context, { operation: "decorate", memoryId: id });
    assert.equal(calls[0].error.code, "connection_error");
    assert.equal(await memory.report(id, { messages: [assistant("Let's look at his paw.")] }), null, "skipped, not sent");
    assert.equal(calls.length, 1, "skipping is not an error");

    assert.equal(await live.command("start"), "started");
    const back = await memory.decorate(id, { messages: [user("Can you book a visit?")] });
    assert.equal(back.degraded, false);
    // Messages sent during the outage are not stored by the server.
    assert.deepEqual(back.messages.map((m) => m.content), ["Hi, I am back.", "Welcome back! How is Rex?", "Can you book a visit?"]);
    assert.equal((await memory.report(id, { messages: [assistant("Booked for Monday.")] })).accepted, 1);
    assert.equal(await memory.flush(), true);
  });
});
