// The Vercel AI example in docs/integrations.md runs as written against a live server.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { LiveServer, liveServerAvailable } from "./live-server.mjs";

const DOC = fileURLToPath(new URL("../../../docs/integrations.md", import.meta.url));
// Inside the package, so `import "threadless"` resolves to this package (its exports map).
const SCRIPT = fileURLToPath(new URL("./.docs-example-vercel-ai.mjs", import.meta.url));
const skip = liveServerAvailable();
let live;

function example(name) {
  const text = readFileSync(DOC, "utf8");
  const start = text.indexOf(`<!-- example: ${name} -->\n\`\`\`js\n`);
  assert.ok(start >= 0, `no ${name} example in docs/integrations.md`);
  const body = text.slice(text.indexOf("\n", text.indexOf("```js", start)) + 1);
  return body.slice(0, body.indexOf("\n```"));
}

describe("docs/integrations.md", { skip: skip ?? false }, () => {
  before(async () => {
    live = await new LiveServer().start();
  });
  after(async () => {
    rmSync(SCRIPT, { force: true });
    await live?.close();
  });

  test("the Vercel AI example prints what the page promises", async () => {
    writeFileSync(SCRIPT, example("vercel-ai"));
    const { stdout } = await promisify(execFile)(process.execPath, [SCRIPT], {
      env: { ...process.env, THREADLESS_API_KEY: live.key, THREADLESS_BASE_URL: live.url },
      timeout: 60_000,
    });
    assert.deepEqual(stdout.trim().split("\n"), ["Hello Ada!", "You are Ada.", "system,user,assistant,user"]);
  });
});
