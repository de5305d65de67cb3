#!/usr/bin/env node
// Type-checks every ```ts / ```typescript block of every README.md and docs/*.md, so the code a reader
// copies compiles. Each block is written as a module of its own to tooling/readme-check/.blocks/ (a
// workspace package that depends on every published package, so imports resolve as a reader's would)
// and all of them are checked with one `tsc --noEmit`; an error is reported at the markdown file and
// line it comes from.
//
// A block may use names it does not define (the reviewer you already have, the model's arguments):
// declare them in an HTML comment on the line before the fence, which readers do not see and which is
// checked with the block: <!-- readme-check: declare const reviewer: Reviewer; -->.
// A block that is deliberately partial (a fragment of a larger call, an interface excerpt) says so in
// its info string: ```ts nocheck. Use it sparingly: a reader cannot tell a fragment from a mistake.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const workDir = join(root, 'tooling/readme-check');
const blocksDir = join(workDir, '.blocks');

/** README.md files git knows of (tracked or new, not ignored), and docs/*.md. */
function markdownFiles() {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
  });
  return listed
    .split('\n')
    .filter((file) => /(^|\/)README\.md$/.test(file) || /^docs\/[^/]+\.md$/.test(file))
    .filter((file) => !file.startsWith('tooling/readme-check/'))
    .sort();
}

/** The TypeScript blocks of one markdown file: their text, first line (1-based) and whether to check. */
function blocksOf(file) {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const blocks = [];
  let open;
  let givens;
  for (const [index, line] of lines.entries()) {
    const fence = /^(\s*)(`{3,}|~{3,})\s*(\S*)\s*(.*)$/.exec(line);
    if (!open) {
      const comment = /^\s*<!--\s*readme-check:(.*)-->\s*$/.exec(line);
      if (comment) {
        givens = { text: comment[1].trim(), line: index + 1 };
        continue;
      }
      if (fence && /^(ts|typescript)$/i.test(fence[3])) {
        open = {
          fence: fence[2],
          info: fence[4],
          start: index + 2,
          indent: fence[1].length,
          body: [],
          givens,
        };
        givens = undefined;
      } else if (fence?.[3] !== undefined && fence[2]) {
        // Another language's block: skip to its closing fence.
        open = { fence: fence[2], skip: true };
      }
      if (line.trim() !== '') givens = undefined;
      continue;
    }
    if (fence?.[2].startsWith(open.fence[0]) && fence[2].length >= open.fence.length && !fence[3]) {
      if (!open.skip)
        blocks.push({
          file,
          start: open.start,
          check: !/\bnocheck\b/.test(open.info),
          text: open.body.join('\n'),
          givens: open.givens,
        });
      open = undefined;
      continue;
    }
    if (!open.skip) open.body.push(line.slice(Math.min(open.indent, line.length - line.trimStart().length)));
  }
  return blocks;
}

const blocks = markdownFiles().flatMap(blocksOf);

// The ten-line example of the root README and docs/embedding.md is the one CI runs: the same text.
const HELLO_DOOR = 'examples/hello-door/src/hello-door.ts';
const helloDoor = readFileSync(join(root, HELLO_DOOR), 'utf8').trim();
const copyProblems = ['README.md', 'docs/embedding.md'].flatMap((file) => {
  const copy = blocks.find((block) => block.file === file && block.text.includes("from '@ux/door'"));
  if (!copy) return [`${file}: no TypeScript block shows ${HELLO_DOOR}`];
  return copy.text.trim() === helloDoor
    ? []
    : [`${file}:${copy.start}: the block differs from ${HELLO_DOOR}, which CI runs`];
});
const checked = blocks.filter((block) => block.check);
rmSync(blocksDir, { recursive: true, force: true });
mkdirSync(blocksDir, { recursive: true });
const byFile = new Map();
checked.forEach((block, index) => {
  const name = `block-${String(index).padStart(3, '0')}.ts`;
  byFile.set(name, block);
  // `export {}` makes each block a module of its own: names do not clash, top-level await works.
  writeFileSync(
    join(blocksDir, name),
    `${block.givens ? `${block.givens.text}\n` : ''}${block.text}\nexport {};\n`,
  );
});
writeFileSync(
  join(blocksDir, 'tsconfig.json'),
  JSON.stringify(
    {
      extends: '@ux/tsconfig/base.json',
      compilerOptions: { noEmit: true, noUnusedLocals: false, noUnusedParameters: false },
      include: ['*.ts'],
    },
    null,
    2,
  ),
);

const tsc = spawnSync(
  process.execPath,
  [
    join(workDir, 'node_modules/typescript/bin/tsc'),
    '-p',
    join(blocksDir, 'tsconfig.json'),
    '--pretty',
    'false',
  ],
  { cwd: blocksDir, encoding: 'utf8' },
);
const problems = [...copyProblems];
for (const line of `${tsc.stdout}${tsc.stderr}`.split('\n')) {
  const match = /^(block-\d+\.ts)\((\d+),(\d+)\): (.*)$/.exec(line.trim());
  if (!match) {
    if (line.trim()) problems.push(line.trim());
    continue;
  }
  const block = byFile.get(match[1]);
  const blockLine = Number(match[2]) - (block.givens ? 1 : 0);
  const where = blockLine < 1 ? block.givens.line : block.start + blockLine - 1;
  problems.push(`${block.file}:${where}:${match[3]}: ${match[4]}`);
}
const skipped = blocks.length - checked.length;
if (tsc.status !== 0 || problems.length > 0) {
  for (const problem of problems) console.error(problem);
  console.error(
    `check-readme-code: ${problems.length} problem(s) in ${checked.length} TypeScript blocks (${skipped} marked nocheck)`,
  );
  process.exit(1);
}
console.log(
  `check-readme-code: ${checked.length} TypeScript blocks of the READMEs and docs compile (${skipped} marked nocheck)`,
);
