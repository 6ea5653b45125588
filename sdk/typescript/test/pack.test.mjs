// The package as published: `npm pack`, installed into a fresh folder, then imported (ESM),
// required (CommonJS) and type-checked from there.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

test("the packed tarball installs into a fresh folder and works from ESM, CommonJS and TypeScript", () => {
  const work = mkdtempSync(join(tmpdir(), "threadless-pack-"));
  try {
    const out = execFileSync(npm, ["pack", "--json", "--pack-destination", work], { cwd: root, encoding: "utf8" });
    const [packed] = JSON.parse(out);
    const files = packed.files.map((f) => f.path).sort();
    for (const needed of ["LICENSE", "README.md", "package.json", "dist/index.js", "dist/index.d.ts", "dist/cjs/index.js", "dist/cjs/index.d.ts", "dist/cjs/package.json"]) {
      assert.ok(files.includes(needed), `${needed} is in the tarball`);
    }
    assert.ok(!files.some((f) => f.startsWith("src/") || f.startsWith("test/")), "no sources or tests shipped");
    const app = join(work, "app");
    mkdirSync(app, { recursive: true });
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "commonjs" }));
    execFileSync(npm, ["install", "--offline", "--no-audit", "--no-fund", "--silent", join(work, packed.filename)], { cwd: app });
    const required = execFileSync(process.execPath, ["-e", 'const t = require("threadless"); console.log(t.VERSION, typeof t.Threadless, typeof t.fromOpenAI)'], { cwd: app, encoding: "utf8" });
    assert.equal(required.trim(), `${pkg.version} function function`);
    const imported = execFileSync(process.execPath, ["--input-type=module", "-e", 'import { VERSION, Threadless } from "threadless"; console.log(VERSION, typeof Threadless)'], { cwd: app, encoding: "utf8" });
    assert.equal(imported.trim(), `${pkg.version} function`);
    // Types resolve for both entries from the installed package.
    writeFileSync(join(app, "esm.mts"), 'import { Threadless } from "threadless";\nexport const c: Threadless = new Threadless({ apiKey: "k" });\n');
    writeFileSync(join(app, "cjs.cts"), 'import t = require("threadless");\nconst c: t.Threadless = new t.Threadless({ apiKey: "k" });\nvoid c;\n');
    writeFileSync(join(app, "tsconfig.json"), JSON.stringify({
      compilerOptions: { noEmit: true, strict: true, module: "nodenext", moduleResolution: "nodenext", target: "es2022", lib: ["es2022", "dom"], types: [], skipLibCheck: false },
      files: ["esm.mts", "cjs.cts"],
    }));
    const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
    execFileSync(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: app, encoding: "utf8" });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
