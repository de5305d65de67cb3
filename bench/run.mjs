// `pnpm bench [subject]`: runs bench/<subject>/index.mjs (all subjects when none is named). Each
// benchmark runs its baseline in the same run and prints `BENCH <name> <value> …` lines.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const subjects = readdirSync(here, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(here, entry.name, 'index.mjs')))
  .map((entry) => entry.name)
  .sort();
const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !subjects.includes(name));
if (unknown.length > 0) {
  console.error(
    `unknown benchmark subject ${unknown.join(', ')}; available: ${subjects.join(', ') || '(none yet)'}`,
  );
  process.exit(2);
}
let status = 0;
for (const subject of wanted.length > 0 ? wanted : subjects) {
  const result = spawnSync(process.execPath, [join(here, subject, 'index.mjs')], { stdio: 'inherit' });
  status ||= result.status ?? 1;
}
if (subjects.length === 0) console.log('no benchmark subjects yet');
process.exit(status);
