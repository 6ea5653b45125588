// How long decorate takes to fall back: on a refused connection, and on a server that accepts the
// connection but never answers (timeoutMs = 1000). Prints the figures; needs no Threadless server.
import { createServer } from "node:http";
import { createServer as createNetServer } from "node:net";
import { Threadless } from "threadless";

async function listen(server) {
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server.address().port;
}

async function measure(label, baseUrl, runs = 5) {
  const memory = new Threadless({ apiKey: "tl_proj_timing", baseUrl, timeoutMs: 1000, onError: null });
  const times = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const request = await memory.decorate("mem_timing", { messages: [{ role: "user", content: "hi" }] });
    times.push(performance.now() - started);
    if (!request.degraded) throw new Error("expected a fallback");
  }
  times.sort((a, b) => a - b);
  console.log(`${label}: median ${times[Math.floor(runs / 2)].toFixed(1)} ms, max ${times.at(-1).toFixed(1)} ms over ${runs} runs`);
}

const closed = createNetServer();
const refusedPort = await listen(closed);
await new Promise((resolve) => closed.close(resolve));
await measure("refused connection", `http://127.0.0.1:${refusedPort}`);

const sockets = new Set();
const hanging = createServer(() => {}); // accepts, reads, never answers
hanging.on("connection", (socket) => sockets.add(socket));
const hangPort = await listen(hanging);
await measure("hanging server, timeoutMs=1000", `http://127.0.0.1:${hangPort}`);
for (const socket of sockets) socket.destroy();
hanging.close();
