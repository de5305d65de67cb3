// CI gate: every published package changed since the last release has a pending changeset naming it.
// `changeset status` alone passes as soon as any one changeset exists; this names each package that
// has none. The last release is the newest commit whose subject starts with "Release:" (the commit
// `pnpm changeset version` produced); tests, READMEs' neighbours and CHANGELOGs do not count as
// changes.
//
// A changeset's text goes into the changelog of every package it names, so a changeset names one
// package, unless a front-matter comment line `# shared: <why the text fits every package named>`
// says the text is true for each of them (changesets' YAML reader skips the comment). Otherwise write
// one changeset per package, each saying what changed for that package.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const git = (...args) => execFileSync('git', args, { encoding: 'utf8' }).trim();

function fail(message) {
  console.error(`changesets: ${message}`);
  process.exit(1);
}

if (git('rev-parse', '--is-shallow-repository') === 'true') {
  fail('this is a shallow clone; the check needs the history back to the last "Release:" commit');
}
const release = git('log', '--format=%H', '--grep=^Release:', '-1');
if (!release) fail('no "Release:" commit in the history; cut a release with `pnpm changeset version`');

/** Published workspace packages: directory → name. */
const packages = new Map();
for (const group of ['packages', 'apps']) {
  for (const entry of readdirSync(group)) {
    const manifest = join(group, entry, 'package.json');
    if (!existsSync(manifest)) continue;
    const { name, private: isPrivate } = JSON.parse(readFileSync(manifest, 'utf8'));
    if (!isPrivate) packages.set(join(group, entry), name);
  }
}

const NOT_A_CHANGE = [/\.test\.ts$/, /(^|\/)CHANGELOG\.md$/, /(^|\/)test\//, /(^|\/)fixtures\//];
const changed = new Set();
for (const file of git('diff', '--name-only', `${release}..HEAD`).split('\n').filter(Boolean)) {
  if (NOT_A_CHANGE.some((pattern) => pattern.test(file))) continue;
  for (const [dir, name] of packages) if (file.startsWith(`${dir}/`)) changed.add(name);
}

/** Package names in the front matter of every pending changeset. */
const covered = new Set();
const mixed = [];
for (const entry of readdirSync('.changeset')) {
  if (!entry.endsWith('.md') || entry === 'README.md') continue;
  const text = readFileSync(join('.changeset', entry), 'utf8');
  const front = /^---\n([\s\S]*?)\n---/.exec(text);
  if (!front) fail(`.changeset/${entry}: no front matter (--- "package": patch|minor|major ---)`);
  let shared = false;
  let named = 0;
  for (const line of front[1].split('\n')) {
    if (/^\s*#\s*shared:\s*\S/.test(line)) {
      shared = true;
      continue;
    }
    named += 1;
    const match = /^\s*["']?(@?[^"':]+)["']?\s*:\s*(patch|minor|major)\s*$/.exec(line);
    if (!match) fail(`.changeset/${entry}: cannot read the line ${JSON.stringify(line)}`);
    if (![...packages.values()].includes(match[1])) {
      fail(`.changeset/${entry}: "${match[1]}" is not a published package of this workspace`);
    }
    covered.add(match[1]);
  }
  if (named > 1 && !shared) mixed.push(`.changeset/${entry} (${named} packages)`);
}
if (mixed.length > 0) {
  fail(
    `a changeset's text goes into every named package's changelog; these name several packages ` +
      `without a "# shared: <why>" line in their front matter: ${mixed.join(', ')}. ` +
      'Write one changeset per package, or add that line when the text is true for each of them.',
  );
}

const missing = [...changed].filter((name) => !covered.has(name)).sort();
if (missing.length > 0) {
  fail(
    `changed since the last release (${release.slice(0, 12)}) without a changeset: ${missing.join(', ')}. ` +
      'Run `pnpm changeset` and describe the change for users.',
  );
}
// changesets' own reading of the same range (it also refuses malformed changeset files).
try {
  execFileSync('pnpm', ['exec', 'changeset', 'status', '--since', release], { stdio: 'inherit' });
} catch {
  fail('`changeset status` failed (above)');
}
console.log(`changesets: ${changed.size} package(s) changed since the last release, each with a changeset`);
