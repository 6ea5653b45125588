// Starts a real Threadless server (the project's Python venv) for the live tests.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const PYTHON = process.env.THREADLESS_TEST_PYTHON ?? `${ROOT}.venv/bin/python`;

export function liveServerAvailable() {
  return existsSync(PYTHON) ? null : `no project venv at ${PYTHON} (run \`make install\` in the repo root)`;
}

export class LiveServer {
  /** `worker: true` also starts a Celery worker (facts, recall indexing and compaction run). */
  async start({ worker = false } = {}) {
    const args = [fileURLToPath(new URL("live_server.py", import.meta.url)), ...(worker ? ["--worker"] : [])];
    this.proc = spawn(PYTHON, args, {
      cwd: ROOT,
      stdio: ["pipe", "pipe", "inherit"],
    });
    this.lines = createInterface({ input: this.proc.stdout });
    this.waiting = [];
    this.lines.on("line", (line) => this.waiting.shift()?.resolve(line));
    this.proc.on("exit", (code) => {
      for (const waiter of this.waiting.splice(0)) waiter.reject(new Error(`live server exited (${code})`));
    });
    const first = JSON.parse(await this.next());
    this.url = first.url;
    this.key = first.key;
    return this;
  }

  next() {
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  async command(name) {
    this.proc.stdin.write(name + "\n");
    return this.next();
  }

  async close() {
    if (!this.proc || this.proc.exitCode !== null) return;
    const exited = new Promise((resolve) => this.proc.on("exit", resolve));
    this.proc.stdin.end();
    await exited;
  }
}
