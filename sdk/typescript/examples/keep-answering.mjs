// A tiny agent loop that keeps answering while the Threadless server is down.
//
//   make run                                   # in the repo root, in another terminal
//   cd sdk/typescript && npm run build && node examples/keep-answering.mjs
//
// Stop the server (Ctrl-C on `make run`) while this runs: the turns go on, marked "degraded",
// built from the local tail. Start it again: the next turn is served by Threadless again.
// The key comes from THREADLESS_API_KEY or the repo's var/demo.json (written by `make run`).
import { readFileSync } from "node:fs";
import { Threadless } from "threadless";

function demoKey() {
  if (process.env.THREADLESS_API_KEY) return process.env.THREADLESS_API_KEY;
  try {
    return JSON.parse(readFileSync(new URL("../../../var/demo.json", import.meta.url), "utf8")).key;
  } catch {
    console.error("No key: set THREADLESS_API_KEY, or run `make run` once so var/demo.json exists.");
    process.exit(1);
  }
}

const turns = Number(process.argv[2] ?? 30);
const pauseMs = Number(process.env.PAUSE_MS ?? 2000);

const memory = new Threadless({
  apiKey: demoKey(),
  baseUrl: process.env.THREADLESS_BASE_URL ?? "http://127.0.0.1:8000",
  timeoutMs: 2000,
  onError: (error, { operation }) => console.log(`   ↳ ${operation} problem: ${error.code}${error.status ? ` (${error.status})` : ""}`),
});

// A stand-in for your model call: it just describes the request it was given.
function model(request) {
  const last = request.messages.at(-1)?.content;
  return `You said “${last}”. I was given ${request.messages.length} messages and ${request.instructions.length} characters of instructions.`;
}

let memoryId = null;
for (let turn = 1; turn <= turns; turn++) {
  if (!memoryId) {
    try {
      memoryId = (await memory.create({ externalId: "keep-answering-example", instructions: "You are a patient helper." })).id;
      console.log(`memory ${memoryId}`);
    } catch (error) {
      console.log(`turn ${turn}: cannot create the memory yet (${error.code}); the agent could still answer without one`);
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
      continue;
    }
  }
  const started = performance.now();
  const request = await memory.decorate(memoryId, { messages: [{ role: "user", content: `message ${turn}` }] });
  const reply = model(request);
  memory.report(memoryId, { messages: [{ role: "assistant", content: reply }] });
  const ms = Math.round(performance.now() - started);
  console.log(`turn ${turn}: ${request.degraded ? "degraded (local tail)" : "served by Threadless"} in ${ms} ms — ${reply}`);
  await new Promise((resolve) => setTimeout(resolve, pauseMs));
}
await memory.flush();
