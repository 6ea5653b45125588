// Writes every ```ts block of this package's README.md, the repository's README.md and
// docs/integrations.md to test/types/readme/, so `tsc` type-checks them against the real `openai`
// and `@anthropic-ai/sdk` types (run by `npm test`). The repository's docs-example tests
// (tests/docs/test_typescript_examples.py) run the same blocks against a live server.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const repo = join(root, "..", "..");
// The package's README is required; the repository's pages are absent from a packed copy.
const pages = [join(root, "README.md"), join(repo, "README.md"), join(repo, "docs", "integrations.md")]
  .filter((page, i) => i === 0 || existsSync(page));
const out = join(root, "test", "types", "readme");
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

function tsBlocks(text) {
  const blocks = [];
  let current = null;
  for (const line of text.split("\n")) {
    if (current === null && line.trim() === "```ts") current = [];
    else if (current !== null && line.trim() === "```") {
      blocks.push(current.join("\n") + "\n");
      current = null;
    } else if (current !== null) current.push(line);
  }
  return blocks;
}

let count = 0;
for (const page of pages) {
  const name = relative(repo, page);
  const blocks = tsBlocks(readFileSync(page, "utf8"));
  if (page === pages[0] && !blocks.length) throw new Error(`${name} has no \`\`\`ts blocks to check`);
  const stem = name.replace(/[^A-Za-z0-9]+/g, "-").replace(/-md$/, "");
  blocks.forEach((code, i) => {
    writeFileSync(join(out, `${stem}-${i + 1}.ts`), `// Generated from ${name} by scripts/readme-examples.mjs.\nexport {};\n${code}`);
  });
  count += blocks.length;
}
console.log(`${count} TypeScript examples written to test/types/readme/`);
