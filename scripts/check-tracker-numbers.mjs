// Fails on tracker numbers (the word "issue" followed by a number) in the tree's files: they mean nothing to a reader
// outside the project's tracker. Say what the thing is instead. Links to another project's issues
// (`…/issues/123`) do not match. Reads the files git tracks or would track (ignored ones aside).
//
//   node scripts/check-tracker-numbers.mjs
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const TRACKER_NUMBER = /issue ?#?[0-9]+/i;
const SKIP = [/(^|\/)pnpm-lock\.yaml$/, /\.(png|jpe?g|gif|wasm|tgz|gz|xz|ico)$/];

const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
  encoding: 'utf8',
  maxBuffer: 64 * 1024 * 1024,
})
  .split('\0')
  .filter((file) => file && !SKIP.some((pattern) => pattern.test(file)));

const found = [];
for (const file of files) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    continue; // listed but gone (a deletion not yet staged)
  }
  if (text.includes('\0')) continue; // binary
  text.split('\n').forEach((line, index) => {
    const match = TRACKER_NUMBER.exec(line);
    if (match) found.push(`${file}:${index + 1}: "${match[0]}" in: ${line.trim().slice(0, 120)}`);
  });
}
if (found.length > 0) {
  console.error(found.join('\n'));
  console.error(
    `check-tracker-numbers: ${found.length} tracker number(s); say what the thing is instead (it means nothing outside the tracker)`,
  );
  process.exit(1);
}
console.log(`check-tracker-numbers: no tracker numbers in ${files.length} files`);
