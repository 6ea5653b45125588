// Writes every ```ts block of README.md to test/types/readme/ so `tsc` type-checks the README
// against the real `openai` and `@anthropic-ai/sdk` types (run by `npm test`).
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const readme = readFileSync(join(root, "README.md"), "utf8");
const out = join(root, "test", "types", "readme");
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const blocks = [];
let current = null;
for (const line of readme.split("\n")) {
  if (current === null && line.trim() === "```ts") current = [];
  else if (current !== null && line.trim() === "```") {
    blocks.push(current.join("\n") + "\n");
    current = null;
  } else if (current !== null) current.push(line);
}
if (!blocks.length) throw new Error("README.md has no ```ts blocks to check");
blocks.forEach((code, i) => {
  writeFileSync(join(out, `example-${i + 1}.ts`), `// Generated from README.md by scripts/readme-examples.mjs.\nexport {};\n${code}`);
});
console.log(`README.md: ${blocks.length} TypeScript examples written to test/types/readme/`);
