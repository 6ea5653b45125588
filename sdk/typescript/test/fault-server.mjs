// A local fault-injection server on a real socket: a tiny stand-in for the Threadless API that can
// also refuse, hang, fail with 5xx/429/408/4xx, answer invalid JSON or drop the connection mid-body.
import { createServer } from "node:http";
import { createServer as createNetServer } from "node:net";

const ERRORS = {
  400: ["invalid_request", "messages[0].role: must be one of user, assistant, tool, system.", "Check the request against the API reference at /v1/docs."],
  401: ["unauthorized", "The key is revoked.", "Send 'Authorization: Bearer <key>' with an active project key."],
  404: ["not_found", "No such object in this project.", "Use an id that POST /v1/memories returned."],
  429: ["rate_limited", "Too many requests for this key.", "Wait for the number of seconds in Retry-After, then try again."],
  500: ["internal", "Something went wrong on our side.", "Retry later; quote the request_id if it persists."],
  503: ["unavailable", "The database is unavailable.", "A dependency is down. Retry after the number of seconds in Retry-After."],
};

let counter = 0;

function errorBody(status) {
  const [code, message, hint] = ERRORS[status];
  return JSON.stringify({ error: { code, message, hint, request_id: `req_fault${++counter}`, retryable: status >= 500 || status === 429 } });
}

/** A port nothing listens on: connections to it are refused. */
export async function refusedPort() {
  const server = createNetServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export class FaultServer {
  constructor() {
    /** Behaviour per operation: "ok" or a fault name (see `handle`). */
    this.modes = { decorate: "ok", report: "ok", other: "ok" };
    /** Milliseconds a "slow" report takes before it answers. */
    this.reportDelayMs = 300;
    /** Milliseconds before a decorate is answered (per request). */
    this.decorateDelayMs = () => 0;
    this.contextText = "";
    this.requests = [];
    this.history = new Map();
    this.instructions = new Map();
    this.sockets = new Set();
    this.hanging = [];
    this.server = createServer((req, res) => this.receive(req, res));
    this.server.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
  }

  async start() {
    await new Promise((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${this.server.address().port}`;
    return this;
  }

  async close() {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  reset() {
    this.modes = { decorate: "ok", report: "ok", other: "ok" };
    this.decorateDelayMs = () => 0;
    this.requests = [];
    this.contextText = "";
    this.history.clear();
    this.instructions.clear();
  }

  operations(name) {
    return this.requests.filter((r) => r.operation === name);
  }

  receive(req, res) {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const match = /^\/v1\/memories\/(external\/)?([^/?]+)\/(decorate|report)$/.exec(req.url);
      const operation = match ? match[3] : "other";
      // By external id the server answers its own memory id ("mem_" + the external id here).
      const memoryId = match ? (match[1] ? `mem_${match[2]}` : match[2]) : undefined;
      const record = { method: req.method, url: req.url, headers: req.headers, operation, memoryId, body: text ? JSON.parse(text) : null, answered: false };
      this.requests.push(record);
      const done = () => { record.answered = true; };
      res.on("finish", done);
      const delay = operation === "decorate" ? this.decorateDelayMs(record) : 0;
      if (delay) setTimeout(() => this.handle(this.modes[operation], record, res), delay);
      else this.handle(this.modes[operation], record, res);
    });
  }

  handle(mode, record, res) {
    const json = (status, body, headers = {}) => {
      res.writeHead(status, { "Content-Type": "application/json", "X-Request-Id": `req_hdr${++counter}`, ...headers });
      res.end(typeof body === "string" ? body : JSON.stringify(body));
    };
    switch (mode) {
      case "ok":
        return this.ok(record, json);
      case "slow":
        return void setTimeout(() => this.ok(record, json), this.reportDelayMs);
      case "hang":
        this.hanging.push(res);
        return;
      case "slow-body": {
        res.writeHead(200, { "Content-Type": "application/json", "Content-Length": "100" });
        res.write('{"memory_id": "');
        const timer = setInterval(() => res.write(" "), 100);
        res.on("close", () => clearInterval(timer));
        return;
      }
      case "drop": {
        res.writeHead(200, { "Content-Type": "application/json", "Content-Length": "5000" });
        res.write('{"memory_id": "mem_x", "instructions": "');
        return void setTimeout(() => res.socket?.destroy(), 20);
      }
      case "invalid-json":
        return json(200, "<html>not json{");
      case "502":
        res.writeHead(502, { "Content-Type": "text/html" });
        return void res.end("<html><body><h1>502 Bad Gateway</h1></body></html>");
      case "408":
        res.writeHead(408, { Connection: "close" });
        return void res.end();
      case "404-plain":
        res.writeHead(404, { "Content-Type": "text/plain" });
        return void res.end("Not Found");
      case "429":
        return json(429, errorBody(429), { "Retry-After": "7" });
      case "429-quota":
        return json(429, { error: { code: "quota_exceeded", message: "The plan's decorate allowance is used up.", hint: "Raise the plan's allowance.", request_id: `req_fault${++counter}`, retryable: true } });
      case "503":
        return json(503, errorBody(503), { "Retry-After": "5" });
      default:
        return json(Number(mode), errorBody(Number(mode)));
    }
  }

  ok(record, json) {
    const id = record.memoryId;
    // History is per thread (keyed by the memory id for the default one), instructions per memory.
    const named = record.body?.thread;
    const thread = named && named !== "default" ? `${id}\u0000${named}` : id;
    if (record.operation === "decorate") {
      const body = record.body;
      const own = typeof body.instructions === "string" ? body.instructions : this.instructions.get(id) ?? "";
      const fresh = body.messages.filter((m) => m.role !== "system");
      const history = this.history.get(thread) ?? [];
      const messages = [...history, ...fresh];
      if (body.store !== false) {
        this.history.set(thread, messages);
        this.instructions.set(id, own);
      }
      const ctx = this.contextText;
      return json(200, {
        memory_id: id,
        turn: messages.filter((m) => m.role === "user").length,
        instructions: own && ctx ? `${own}\n\n${ctx}` : own || ctx,
        context_text: ctx,
        messages,
        context: { facts: [], recalled: [], digests: [], summary: "" },
        usage: { instructions_tokens: 0, history_tokens: 0, new_tokens: 0, dropped_messages: 0, recalled: 0 },
      });
    }
    if (record.operation === "report") {
      this.history.set(thread, [...(this.history.get(thread) ?? []), ...record.body.messages]);
      return json(202, { accepted: record.body.messages.length, turn: 1 });
    }
    return json(200, { ok: true, method: record.method, url: record.url, body: record.body });
  }
}
