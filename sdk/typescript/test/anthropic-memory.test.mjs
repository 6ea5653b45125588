// threadlessMemoryTool() in the real `@anthropic-ai/sdk` tool runner, against a local stub model (a
// real socket) that issues the memory tool's commands, and a live Threadless server. The texts the
// model gets back are the Python `anthropic` package's reference backend's (the server's contract,
// fixtures/memory-tool-reference.json, written by running it on the same commands). The TypeScript
// package's own BetaLocalFilesystemMemoryTool words some of them differently ("excluding hidden
// items and node_modules", an "Error: " prefix on refusals): the test shows where.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { betaMemoryTool } from "@anthropic-ai/sdk/helpers/beta/memory";
import { BetaLocalFilesystemMemoryTool } from "@anthropic-ai/sdk/tools/memory/node";
import { Threadless } from "threadless";
import { threadlessMemoryTool } from "threadless/integrations/anthropic";
import { LiveServer, liveServerAvailable } from "./live-server.mjs";

const skip = liveServerAvailable();
let live;

const LOOP = [
  { command: "view", path: "/memories" },
  { command: "create", path: "/memories/user.md", file_text: "Name: Ada\nCity: Oslo\nCity: Oslo\n" },
  { command: "create", path: "/memories/user.md", file_text: "twice" },
  { command: "str_replace", path: "/memories/user.md", old_str: "City: Oslo", new_str: "City: Bergen" },
  { command: "str_replace", path: "/memories/user.md", old_str: "Oslo\nCity: Oslo", new_str: "Bergen" },
  { command: "insert", path: "/memories/user.md", insert_line: 1, insert_text: "Pet: beagle" },
  { command: "insert", path: "/memories/user.md", insert_line: 42, insert_text: "far" },
  { command: "view", path: "/memories/user.md", view_range: [1, 3] },
  { command: "create", path: "/memories/todo/today.md", file_text: "- call Bob\n" },
  { command: "rename", old_path: "/memories/todo/today.md", new_path: "/memories/todo/done.md" },
  { command: "rename", old_path: "/memories/todo/done.md", new_path: "/memories/user.md" },
  { command: "delete", path: "/memories/todo" },
  { command: "delete", path: "/memories/todo" },
  { command: "view", path: "/memories/user.md" },
];

/** A Messages API answering each request with the next scripted memory command, then text. */
async function stubModel(commands, onReply = async () => {}) {
  const results = [];
  const server = createServer(async (req, res) => {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    const body = JSON.parse(raw);
    const last = body.messages.at(-1);
    if (Array.isArray(last.content)) results.push(...last.content.filter((p) => p.type === "tool_result"));
    const step = results.length;
    await onReply(step);
    const content = step < commands.length
      ? [{ type: "tool_use", id: `toolu_${step}`, name: "memory", input: commands[step] }]
      : [{ type: "text", text: "Noted." }];
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ id: `msg_${step}`, type: "message", role: "assistant", model: "stub", content,
      stop_reason: step < commands.length ? "tool_use" : "end_turn", stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 } }));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const texts = () => results.map((r) => [typeof r.content === "string" ? r.content : r.content.map((p) => p.text).join(""), r.is_error === true]);
  return { url: `http://127.0.0.1:${server.address().port}`, texts, close: () => new Promise((r) => server.close(r)) };
}

async function runLoop(commands, tool, onReply) {
  const model = await stubModel(commands, onReply);
  try {
    const anthropic = new Anthropic({ apiKey: "sk-ant-test", baseURL: model.url, maxRetries: 0 });
    const final = await anthropic.beta.messages.toolRunner({ model: "claude-stub", max_tokens: 256, tools: [tool],
      messages: [{ role: "user", content: "Remember me." }] }).runUntilDone();
    return { texts: model.texts(), final };
  } finally {
    await model.close();
  }
}

describe("threadlessMemoryTool", { skip: skip ?? false }, () => {
  before(async () => {
    live = await new LiveServer().start();
  });
  after(async () => {
    await live?.close();
  });

  test("a tool runner loop gets the reference backend's texts", async () => {
    const memory = new Threadless({ apiKey: live.key, baseUrl: live.url });
    const created = await memory.request("POST", "/memories", { body: {} });
    const ours = await runLoop(LOOP, threadlessMemoryTool({ client: memory, memoryId: created.id }));
    const fixture = JSON.parse(await readFile(new URL("fixtures/memory-tool-reference.json", import.meta.url), "utf8"));
    assert.deepEqual(fixture.commands, LOOP);
    assert.deepEqual(ours.texts, fixture.results);
    const dir = await mkdtemp(join(tmpdir(), "tl-memory-"));
    try {
      const typescriptReference = await runLoop(LOOP, betaMemoryTool(await BetaLocalFilesystemMemoryTool.init(dir)));
      assert.equal(typescriptReference.texts[2][0], "Error: File /memories/user.md already exists");
      assert.equal(ours.texts[2][0], "File /memories/user.md already exists");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    assert.equal(ours.final.content[0].text, "Noted.");
    assert.deepEqual(ours.texts[2], ["File /memories/user.md already exists", true]);
    assert.deepEqual(ours.texts[13], ["Here's the content of /memories/user.md with line numbers:\n     1\tName: Ada\n     2\tPet: beagle\n     3\tCity: Bergen\n     4\t", false]);
  });

  test("bad commands come back as error results", async () => {
    const memory = new Threadless({ apiKey: live.key, baseUrl: live.url });
    const externalId = `ts-${Date.now()}`;
    const { texts } = await runLoop([
      { command: "view", path: "/memories/../../etc/passwd" },
      { command: "create", path: "/memories/%2e%2e/x.md", file_text: "x" },
      { command: "create", path: "/memories/huge.md", file_text: "x".repeat(300_000) },
    ], threadlessMemoryTool({ client: memory, externalId }));
    assert.deepEqual(texts[0], ["Path /memories/../../etc/passwd would escape /memories directory", true]);
    assert.deepEqual(texts[1], ["Path /memories/%2e%2e/x.md would escape /memories directory", true]);
    assert.ok(texts[2][1] && texts[2][0].startsWith("File /memories/huge.md would be 300,000 bytes"));
    const listing = await memory.request("GET", `/memories/external/${externalId}/files`);
    assert.deepEqual(listing.data, []);
  });

  test("an outage mid-loop is an error result, onError hears it, and the agent keeps going", async () => {
    const calls = [];
    const memory = new Threadless({ apiKey: live.key, baseUrl: live.url, timeoutMs: 3000, onError: (error, context) => calls.push(context) });
    const created = await memory.request("POST", "/memories", { body: {} });
    const commands = [
      { command: "create", path: "/memories/a.md", file_text: "a\n" },
      { command: "view", path: "/memories/a.md" },
      { command: "insert", path: "/memories/a.md", insert_line: 1, insert_text: "b" },
    ];
    const { texts, final } = await runLoop(commands, threadlessMemoryTool({ client: memory, memoryId: created.id }), async (step) => {
      if (step === 1) await live.command("stop");
      if (step === 2) await live.command("start");
    });
    assert.deepEqual(texts, [
      ["File created successfully at: /memories/a.md", false],
      ["Memory is unavailable right now (Threadless: connection_error). Try again later.", true],
      ["The file /memories/a.md has been edited.", false],
    ]);
    assert.equal(final.content[0].text, "Noted.");
    assert.deepEqual(calls, [{ operation: "memory.view", memoryId: created.id }]);
  });
});
