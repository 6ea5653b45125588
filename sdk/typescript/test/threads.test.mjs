// Threads against a real Threadless server with a Celery worker (facts are learnt in the
// background): separate windows, facts across threads, the threads API, the history import with
// message times, and the Vercel AI adapter's thread. The tail per thread is in failures.test.mjs.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { generateText, wrapLanguageModel } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { Threadless, ThreadlessError } from "threadless";
import { threadlessMemory } from "threadless/integrations/vercel-ai";
import { LiveServer, liveServerAvailable } from "./live-server.mjs";

const skip = liveServerAvailable();
let live;
let calls = [];

function client(options = {}) {
  return new Threadless({
    apiKey: live.key,
    baseUrl: live.url,
    timeoutMs: 30_000, // a worker's first job (loading its models) can hold SQLite's write lock for seconds
    onError: (error, context) => calls.push({ error, context }),
    ...options,
  });
}

const user = (content) => ({ role: "user", content });
const assistant = (content) => ({ role: "assistant", content });
const contents = (messages) => messages.map((m) => m.content);

async function waitFor(check, what, timeoutMs = 60_000) {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe("threads against a live Threadless server", { skip: skip ?? false }, () => {
  before(async () => {
    live = await new LiveServer().start({ worker: true });
  });
  after(async () => {
    await live?.close();
  });

  const dana = { externalId: "ts-threads-dana" };

  test("two threads of one memory: each has its own window and turns; a fact learnt in one shows in the other", async () => {
    const memory = client();
    const trip = await memory.decorate(dana, { thread: "trip", messages: [user("Hi, I'm Dana. I live in Lisbon.")], instructions: "Be brief." });
    assert.deepEqual([trip.thread, trip.turn, trip.degraded], ["trip", 1, false]);
    assert.equal((await memory.report(dana, { thread: "trip", messages: [assistant("Hello Dana!")] })).accepted, 1);

    const work = await memory.decorate(dana, { thread: "work", messages: [user("Draft an email to my team.")] });
    assert.deepEqual([work.thread, work.turn], ["work", 1]);
    assert.deepEqual(contents(work.messages), ["Draft an email to my team."], "thread trip's messages stay out of work's window");
    await memory.report(dana, { thread: "work", messages: [assistant("Here is a draft.")] });

    await waitFor(async () => (await memory.get(dana)).processing === "processed", "the worker to learn facts");
    const next = await memory.decorate(dana, { thread: "work", messages: [user("Where do I live?")], store: false });
    assert.deepEqual(contents(next.messages), ["Draft an email to my team.", "Here is a draft.", "Where do I live?"]);
    assert.match(JSON.stringify(next.context.facts), /Lisbon/, "facts are the memory's, from every thread");

    const everywhere = await memory.search(dana, "Lisbon");
    assert.deepEqual([everywhere.data[0].thread, everywhere.data[0].turn], ["trip", 1]);
    assert.ok(Date.parse(everywhere.data[0].created_at) > 0);
    const inWork = await memory.search(dana, "Lisbon", { thread: "work" });
    assert.ok(inWork.data.every((hit) => hit.thread === "work"), JSON.stringify(inWork.data));
    const tripEntries = await memory.entries.list(dana, { thread: "trip" });
    assert.deepEqual(tripEntries.data.map((e) => [e.thread, e.turn, e.content]), [
      ["trip", 1, "Hi, I'm Dana. I live in Lisbon."],
      ["trip", 1, "Hello Dana!"],
    ]);
    assert.equal(calls.length, 0);
  });

  test("threads: list (newest activity first, by cursor), get, delete with its receipt", async () => {
    const memory = client();
    const first = await memory.threads.list(dana, { limit: 1 });
    assert.deepEqual(first.data.map((t) => t.id), ["work"]);
    const rest = await memory.threads.list(dana, { cursor: first.next_cursor });
    assert.deepEqual(rest.data.map((t) => t.id), ["trip"]);
    const trip = await memory.threads.get(dana, "trip");
    assert.deepEqual([trip.id, trip.turns, trip.messages], ["trip", 1, 2]);

    const receipt = await memory.threads.delete(dana, "trip");
    assert.equal(receipt.deleted.threads, 1);
    assert.equal(receipt.deleted.entries, 2);
    assert.ok(receipt.deleted.facts >= 1, "the facts learnt only in trip go with it");
    await assert.rejects(memory.threads.get(dana, "trip"), (e) => e instanceof ThreadlessError && e.status === 404);
    assert.doesNotMatch(JSON.stringify((await memory.facts.list(dana)).data), /Lisbon/);
    assert.deepEqual((await memory.threads.list(dana)).data.map((t) => t.id), ["work"]);
    // Reading by an external id no memory has creates none.
    const nobody = { externalId: "ts-threads-nobody" };
    assert.deepEqual((await memory.threads.list(nobody)).data, []);
    assert.deepEqual((await memory.entries.list(nobody)).data, []);
    assert.deepEqual((await memory.search(nobody, "Lisbon")).data, []);
    await assert.rejects(memory.get(nobody), (e) => e.status === 404 && e.code === "not_found");
    assert.deepEqual((await memory.list({ externalId: nobody.externalId })).data, []);
  });

  test("importMessages keeps the messages' times; a retried import stores once; an out-of-order one throws", async () => {
    const memory = client();
    const ref = { externalId: "ts-threads-import" };
    const history = [
      { role: "user", content: "My order 5521 arrived broken", createdAt: new Date("2025-03-01T09:30:00Z") },
      { role: "assistant", content: "Sorry! A replacement is on its way.", created_at: "2025-03-01T09:31:00+00:00" },
    ];
    const answer = await memory.importMessages(ref, { thread: "ticket-981", messages: history, idempotencyKey: "ts-import-1" });
    assert.deepEqual(answer, { accepted: 2, thread: "ticket-981", turns: [1, 1] });
    assert.deepEqual(await memory.importMessages(ref, { thread: "ticket-981", messages: history, idempotencyKey: "ts-import-1" }), answer);

    const entries = [];
    for await (const entry of memory.entries.all(ref, { thread: "ticket-981" })) entries.push(entry);
    assert.deepEqual(
      entries.map((e) => [e.thread, e.role, new Date(e.created_at).toISOString()]),
      [
        ["ticket-981", "user", "2025-03-01T09:30:00.000Z"],
        ["ticket-981", "assistant", "2025-03-01T09:31:00.000Z"],
      ],
    );
    await assert.rejects(
      memory.importMessages(ref, { thread: "ticket-981", messages: [{ role: "user", content: "late", createdAt: "2025-02-01T00:00:00+00:00" }] }),
      (e) => e instanceof ThreadlessError && e.status === 400 && /messages\[0\]\.created_at/.test(e.message),
    );
    const next = await memory.decorate(ref, { thread: "ticket-981", messages: [user("Any news?")], store: false });
    assert.deepEqual(contents(next.messages), ["My order 5521 arrived broken", "Sorry! A replacement is on its way.", "Any news?"]);
    assert.equal(calls.length, 0);
  });

  test("search narrows by role and message times, and ranks facts with messages when asked", async () => {
    const memory = client();
    const ref = { externalId: "ts-threads-search" };
    const said = [
      { role: "user", content: "My kayak is red", createdAt: "2024-01-10T09:00:00Z" },
      { role: "assistant", content: "A red kayak, noted", createdAt: "2024-01-10T09:00:05Z" },
      { role: "user", content: "I painted the kayak blue", createdAt: new Date("2024-03-02T17:00:00Z") },
    ];
    await memory.importMessages(ref, { messages: said });
    await waitFor(async () => (await memory.get(ref)).processing === "processed", "the worker to index");
    const spring = await memory.search(ref, "kayak", { role: "user", after: new Date("2024-03-01T00:00:00Z") });
    assert.deepEqual(spring.data.map((h) => [h.type, h.snippet]), [["message", "I painted the kayak blue"]]);
    const winter = await memory.search(ref, "kayak", { role: "assistant", before: "2024-02-01T00:00:00+00:00" });
    assert.deepEqual(winter.data.map((h) => h.snippet), ["A red kayak, noted"]);
    const fact = await memory.facts.create(ref, "Their kayak is blue");
    const both = await memory.search(ref, "blue kayak", { include: ["messages", "facts"], minScore: 0.01 });
    assert.ok(both.data.some((h) => h.type === "fact" && h.id === fact.id), JSON.stringify(both.data));
    assert.ok(both.data.some((h) => h.type === "message") && both.data.every((h) => h.score >= 0.01));
    await assert.rejects(
      memory.search(ref, "kayak", { role: "system" }),
      (e) => e instanceof ThreadlessError && e.status === 400 && /^role/.test(e.message),
    );
    assert.equal(calls.length, 0);
  });

  test("threadlessMemory({ thread }): each chat of one user gets its own window", async () => {
    const memory = client();
    const { id } = await memory.create();
    const reply = (text) => ({
      content: [{ type: "text", text }],
      finishReason: { unified: "stop", raw: "stop" },
      usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } },
      warnings: [],
    });
    const base = new MockLanguageModelV4({ doGenerate: [reply("Hello Ada!"), reply("Sure.")] });
    const chat = (thread) => wrapLanguageModel({ model: base, middleware: threadlessMemory({ client: memory, memoryId: id, thread }) });
    await generateText({ model: chat("chat-1"), prompt: "My name is Ada." });
    await memory.flush();
    await generateText({ model: chat("chat-2"), prompt: "Plan a trip." });
    await memory.flush();
    // chat-1's turn may be recalled into the system message (recall spans the memory), never into the window.
    const window = base.doGenerateCalls[1].prompt.filter((m) => m.role !== "system");
    assert.deepEqual(window.map((m) => [m.role, m.content[0].text]), [["user", "Plan a trip."]]);
    const entries = (await memory.entries.list(id)).data;
    assert.deepEqual(entries.map((e) => [e.thread, e.role]), [
      ["chat-1", "user"],
      ["chat-1", "assistant"],
      ["chat-2", "user"],
      ["chat-2", "assistant"],
    ]);
  });
});
