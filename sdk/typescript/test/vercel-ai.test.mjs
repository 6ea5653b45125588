// threadlessMemory() under the real `ai` package (wrapLanguageModel, generateText, streamText, a
// tool loop) with its own MockLanguageModelV4, against a live Threadless server.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { generateText, jsonSchema, stepCountIs, streamText, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV4, convertArrayToReadableStream } from "ai/test";
import { Threadless } from "threadless";
import { threadlessMemory } from "threadless/integrations/vercel-ai";
import { LiveServer, liveServerAvailable } from "./live-server.mjs";

const skip = liveServerAvailable();
let live;

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
const finish = (unified) => ({ unified, raw: unified });
const textResult = (text) => ({ content: [{ type: "text", text }], finishReason: finish("stop"), usage, warnings: [] });

function client(calls, options = {}) {
  return new Threadless({
    apiKey: live.key,
    baseUrl: live.url,
    timeoutMs: 3000,
    onError: (error, context) => calls.push({ error, context }),
    ...options,
  });
}

/** What the mock model was sent, as [role, text] pairs (system text, user/assistant text, tool output). */
function seen(call) {
  return call.prompt.map((m) => [
    m.role,
    typeof m.content === "string"
      ? m.content
      : m.content.map((p) => p.text ?? (p.type === "tool-call" ? `call ${p.toolName}` : `result ${p.output?.value}`)).join(""),
  ]);
}

describe("threadlessMemory with the Vercel AI SDK", { skip: skip ?? false }, () => {
  before(async () => {
    live = await new LiveServer().start();
  });
  after(async () => {
    await live?.close();
  });

  test("generateText: the second call sees the first turn, and both turns are stored", async () => {
    const calls = [];
    const memory = client(calls);
    const { id } = await memory.create();
    const mock = new MockLanguageModelV4({ doGenerate: [textResult("Hello Ada!"), textResult("Your name is Ada.")] });
    const model = wrapLanguageModel({ model: mock, middleware: threadlessMemory({ client: memory, memoryId: id }) });
    const first = await generateText({ model, system: "Be brief.", prompt: "My name is Ada." });
    assert.equal(first.text, "Hello Ada!");
    await memory.flush();
    await generateText({ model, system: "Be brief.", prompt: "What is my name?" });
    assert.deepEqual(seen(mock.doGenerateCalls[1]), [
      ["system", "Be brief."],
      ["user", "My name is Ada."],
      ["assistant", "Hello Ada!"],
      ["user", "What is my name?"],
    ]);
    await memory.flush();
    const entries = (await memory.entries.list(id)).data;
    assert.deepEqual(entries.map((e) => [e.role, e.turn]), [["user", 1], ["assistant", 1], ["user", 2], ["assistant", 2]]);
    assert.equal(calls.length, 0);
  });

  test("an app that sends its whole history stores only the new turn", async () => {
    const memory = client([]);
    const { id } = await memory.create();
    const mock = new MockLanguageModelV4({ doGenerate: [textResult("one"), textResult("two")] });
    const model = wrapLanguageModel({ model: mock, middleware: threadlessMemory({ client: memory, memoryId: id }) });
    const firstTurn = [{ role: "user", content: "hi" }];
    const first = await generateText({ model, messages: firstTurn });
    await memory.flush();
    await generateText({ model, messages: [...firstTurn, ...first.response.messages, { role: "user", content: "again" }] });
    await memory.flush();
    const entries = (await memory.entries.list(id)).data;
    assert.deepEqual(entries.map((e) => e.content), ["hi", "one", "again", "two"]);
  });

  test("a tool loop stores the call and its result, and the second step sees both", async () => {
    const memory = client([]);
    const externalId = `ai-${Date.now()}-${Math.random()}`;
    const mock = new MockLanguageModelV4({
      doGenerate: [
        {
          content: [{ type: "tool-call", toolCallId: "call_1", toolName: "weather", input: JSON.stringify({ city: "Paris" }) }],
          finishReason: finish("tool-calls"),
          usage,
          warnings: [],
        },
        textResult("It is 21 °C in Paris."),
      ],
    });
    const model = wrapLanguageModel({ model: mock, middleware: threadlessMemory({ client: memory, externalId }) });
    const weather = tool({
      description: "The weather in a city.",
      inputSchema: jsonSchema({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }),
      execute: async ({ city }) => `21 °C in ${city}`,
    });
    const result = await generateText({ model, prompt: "Weather in Paris?", tools: { weather }, stopWhen: stepCountIs(3) });
    assert.equal(result.text, "It is 21 °C in Paris.");
    const second = mock.doGenerateCalls[1].prompt;
    assert.deepEqual(second.map((m) => m.role), ["user", "assistant", "tool"]);
    assert.equal(second[1].content[0].toolCallId, "call_1");
    assert.deepEqual(second[1].content[0].input, { city: "Paris" });
    assert.equal(second[2].content[0].toolName, "weather");
    await memory.flush();
    const [stored] = (await memory.list({ externalId })).data;
    const entries = (await memory.entries.list(stored.id)).data;
    assert.deepEqual(entries.map((e) => e.role), ["user", "assistant", "tool", "assistant"]);
    assert.equal(entries[2].content, "21 °C in Paris");
  });

  test("streamText: the streamed reply is reported once the stream ends", async () => {
    const memory = client([]);
    const { id } = await memory.create();
    const mock = new MockLanguageModelV4({
      doStream: {
        stream: convertArrayToReadableStream([
          { type: "stream-start", warnings: [] },
          { type: "text-start", id: "t1" },
          { type: "text-delta", id: "t1", delta: "Hello " },
          { type: "text-delta", id: "t1", delta: "there!" },
          { type: "text-end", id: "t1" },
          { type: "finish", finishReason: finish("stop"), usage },
        ]),
      },
    });
    const model = wrapLanguageModel({ model: mock, middleware: threadlessMemory({ client: memory, memoryId: id }) });
    const result = streamText({ model, prompt: "Say hello." });
    assert.equal(await result.text, "Hello there!");
    await memory.flush();
    const entries = (await memory.entries.list(id)).data;
    assert.deepEqual(entries.map((e) => [e.role, e.content]), [["user", "Say hello."], ["assistant", "Hello there!"]]);
  });

  test("facts reach the model in the system message", async () => {
    const memory = client([]);
    const { id } = await memory.create();
    await memory.facts.create(id, "The user's dog is called Biscuit.");
    const mock = new MockLanguageModelV4({ doGenerate: textResult("Biscuit.") });
    const model = wrapLanguageModel({ model: mock, middleware: threadlessMemory({ client: memory, memoryId: id, instructions: "Be kind." }) });
    await generateText({ model, prompt: "What is my dog called?" });
    const [system] = mock.doGenerateCalls[0].prompt;
    assert.equal(system.role, "system");
    assert.ok(system.content.startsWith("Be kind.\n\n") && system.content.includes("Biscuit"), system.content);
  });

  test("with the service down the model still answers from the local tail, and onError hears it", async () => {
    const calls = [];
    const memory = client(calls, { timeoutMs: 2000 });
    const { id } = await memory.create();
    const mock = new MockLanguageModelV4({ doGenerate: [textResult("Hello Ada!"), textResult("Ada.")] });
    const model = wrapLanguageModel({ model: mock, middleware: threadlessMemory({ client: memory, memoryId: id }) });
    await generateText({ model, prompt: "My name is Ada." });
    await memory.flush();
    assert.equal(await live.command("stop"), "stopped");
    try {
      const answer = await generateText({ model, prompt: "What is my name?" });
      assert.equal(answer.text, "Ada.");
    } finally {
      assert.equal(await live.command("start"), "started");
    }
    assert.deepEqual(seen(mock.doGenerateCalls[1]), [
      ["user", "My name is Ada."],
      ["assistant", "Hello Ada!"],
      ["user", "What is my name?"],
    ]);
    assert.ok(calls.length >= 1);
    assert.deepEqual([...new Set(calls.map((c) => c.context.operation))], ["decorate"]);
    assert.equal(calls[0].error.code, "connection_error");
  });

  test("an outage in the middle of a tool loop still sends the model the call with its result", async () => {
    const calls = [];
    const memory = client(calls, { timeoutMs: 2000 });
    const { id } = await memory.create();
    const mock = new MockLanguageModelV4({
      doGenerate: [
        {
          content: [{ type: "tool-call", toolCallId: "call_9", toolName: "weather", input: JSON.stringify({ city: "Oslo" }) }],
          finishReason: finish("tool-calls"),
          usage,
          warnings: [],
        },
        textResult("It is 3 °C in Oslo."),
      ],
    });
    const model = wrapLanguageModel({ model: mock, middleware: threadlessMemory({ client: memory, memoryId: id }) });
    const weather = tool({
      description: "The weather in a city.",
      inputSchema: jsonSchema({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }),
      execute: async ({ city }) => {
        await memory.flush();
        assert.equal(await live.command("stop"), "stopped"); // the service goes down while the tool runs
        return `3 °C in ${city}`;
      },
    });
    try {
      const result = await generateText({ model, prompt: "Weather in Oslo?", tools: { weather }, stopWhen: stepCountIs(3) });
      assert.equal(result.text, "It is 3 °C in Oslo.");
    } finally {
      assert.equal(await live.command("start"), "started");
    }
    const second = mock.doGenerateCalls[1].prompt;
    assert.deepEqual(second.map((m) => m.role), ["user", "assistant", "tool"]);
    assert.equal(second[1].content[0].toolCallId, "call_9");
    assert.equal(second[2].content[0].toolCallId, "call_9");
    assert.ok(calls.some((c) => c.context.operation === "decorate" && c.error.code === "connection_error"));
  });

  test("a new external id answers during an outage without a create call, and onError hears it", async () => {
    const calls = [];
    const memory = client(calls, { timeoutMs: 2000 });
    const mock = new MockLanguageModelV4({ doGenerate: textResult("Hi.") });
    const externalId = `ai-down-${Date.now()}`;
    const model = wrapLanguageModel({ model: mock, middleware: threadlessMemory({ client: memory, externalId }) });
    assert.equal(await live.command("stop"), "stopped");
    try {
      assert.equal((await generateText({ model, prompt: "Hello?" })).text, "Hi.");
    } finally {
      assert.equal(await live.command("start"), "started");
    }
    assert.deepEqual(seen(mock.doGenerateCalls[0]), [["user", "Hello?"]]);
    assert.deepEqual(calls.map((c) => [c.context.operation, c.context.externalId]), [["decorate", externalId]]);
  });
});
