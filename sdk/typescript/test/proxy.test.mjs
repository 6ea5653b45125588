// The real `openai` npm package against Threadless's provider-compatible proxy (SPEC 4.8):
// a plain call and a stream, then what the memory holds.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const PYTHON = process.env.THREADLESS_TEST_PYTHON ?? `${ROOT}.venv/bin/python`;
const skip = existsSync(PYTHON) ? false : `no project venv at ${PYTHON}`;

let proc;
let live;

before(async () => {
  if (skip) return;
  proc = spawn(PYTHON, [fileURLToPath(new URL("proxy_server.py", import.meta.url))], {
    cwd: ROOT, stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: proc.stdout });
  live = JSON.parse(await new Promise((resolve) => lines.once("line", resolve)));
});

after(async () => {
  if (!proc || proc.exitCode !== null) return;
  const exited = new Promise((resolve) => proc.on("exit", resolve));
  proc.stdin.end();
  await exited;
});

function client(user) {
  return new OpenAI({
    baseURL: `${live.url}/v1/openai`, apiKey: live.key, maxRetries: 0,
    defaultHeaders: { "X-Upstream-Base-Url": live.upstream, "X-Upstream-Authorization": "sk-stub",
                      "X-Threadless-External-Id": user },
  });
}

async function entries(memoryId) {
  const answer = await fetch(`${live.url}/v1/memories/${memoryId}/entries`, {
    headers: { Authorization: `Bearer ${live.key}` },
  });
  return (await answer.json()).data.map((e) => [e.role, e.content]);
}

test("a chat completion through the proxy answers and is remembered", { skip }, async () => {
  const { data, response } = await client("ts-user-1").chat.completions
    .create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hello from TypeScript" }] })
    .withResponse();
  assert.equal(data.choices[0].message.content, "Hello from the stub.");
  const memoryId = response.headers.get("x-threadless-memory");
  assert.match(memoryId, /^mem_/);
  assert.deepEqual(await entries(memoryId), [["user", "Hello from TypeScript"], ["assistant", "Hello from the stub."]]);
});

test("a streamed completion arrives chunk by chunk and is remembered", { skip }, async () => {
  const { data: stream, response } = await client("ts-user-2").chat.completions
    .create({ model: "m", stream: true, stream_options: { include_usage: true },
              messages: [{ role: "user", content: "Stream it" }] })
    .withResponse();
  const parts = [];
  let usage = null;
  for await (const chunk of stream) {
    if (chunk.choices[0]?.delta?.content) parts.push(chunk.choices[0].delta.content);
    if (chunk.usage) usage = chunk.usage;
  }
  assert.deepEqual(parts, ["Hello ", "from ", "the ", "stub."]);
  assert.equal(usage.total_tokens, 15);
  const memoryId = response.headers.get("x-threadless-memory");
  assert.deepEqual(await entries(memoryId), [["user", "Stream it"], ["assistant", "Hello from the stub."]]);
});
