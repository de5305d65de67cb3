// Release check for every published package: what `pnpm publish` would upload is what a user can use.
//
//   node scripts/check-packages.mjs [--manifests-only] [--fix] [--json report.json]
//
// For each package under packages/ and apps/ that is not private:
// - manifest: the root LICENSE copied beside it (npm and pnpm always pack a package's LICENSE), the
//   shared `repository` (with its `directory`), `homepage` and `bugs`, and `publishConfig.exports`
//   equal to `exports` without the `@ux/source` condition. That condition points into `src/`, which is
//   not published: it serves builds inside this workspace only (the CLI bundles from sources), and
//   pnpm replaces `exports` by `publishConfig.exports` when it packs or publishes.
// - packed: `pnpm pack` into a temporary directory; every path the packed package.json names
//   (exports, bin, main, types) is in the tarball, and nothing names `@ux/source`.
// - publint on the tarball: every message (error, warning or suggestion) fails.
// - are-the-types-wrong on the tarball, ESM-only profile (the packages are ESM only; CommonJS
//   resolution is not checked). Packages without types (the CLI, a command) are skipped.
//
// `--fix` writes the manifest part (LICENSE copies, repository fields, publishConfig.exports).
// `--manifests-only` skips packing (fast; needs no build). `--json` writes a report in the shape of
// vitest's JSON report (one test per package and check) for `.ci/summary.mjs`. Needs a build first.
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { publishedPackages } from './published-packages.mjs';

const REPOSITORY_URL = 'git+https://github.com/ux-dev/ux.git';
const HOMEPAGE = 'https://github.com/ux-dev/ux';
const SOURCE_CONDITION = '@ux/source';
const ATTW = resolve('node_modules/@arethetypeswrong/cli/dist/index.js');

const args = process.argv.slice(2);
const fix = args.includes('--fix');
const manifestsOnly = args.includes('--manifests-only');
const jsonIndex = args.indexOf('--json');
const jsonReport = jsonIndex >= 0 ? args[jsonIndex + 1] : undefined;

const rootLicense = readFileSync('LICENSE', 'utf8');

/** `exports` with every `@ux/source` condition removed. */
function withoutSourceCondition(value) {
  if (Array.isArray(value)) return value.map(withoutSourceCondition);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== SOURCE_CONDITION)
      .map(([key, inner]) => [key, withoutSourceCondition(inner)]),
  );
}

function hasSourceCondition(value) {
  return JSON.stringify(value ?? null).includes(JSON.stringify(SOURCE_CONDITION));
}

/** The fields every published manifest carries, for the package in `dir`. */
function expectedFields(dir, manifest) {
  const fields = {
    license: 'MIT',
    repository: { type: 'git', url: REPOSITORY_URL, directory: dir },
    homepage: `${HOMEPAGE}/tree/main/${dir}#readme`,
    bugs: { url: `${HOMEPAGE}/issues` },
  };
  const publishConfig = { ...(manifest.publishConfig ?? {}) };
  if (hasSourceCondition(manifest.exports)) publishConfig.exports = withoutSourceCondition(manifest.exports);
  else delete publishConfig.exports;
  return { fields, publishConfig };
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** Problems with the manifest and LICENSE in `dir`; with `--fix`, writes them right instead. */
function checkManifest({ dir, manifest }) {
  const problems = [];
  const licenseFile = join(dir, 'LICENSE');
  if (!existsSync(licenseFile) || readFileSync(licenseFile, 'utf8') !== rootLicense) {
    if (fix) copyFileSync('LICENSE', licenseFile);
    else problems.push(`${licenseFile} is missing or differs from the root LICENSE (cp LICENSE ${dir}/)`);
  }
  const { fields, publishConfig } = expectedFields(dir, manifest);
  const next = {};
  for (const [key, value] of Object.entries(manifest)) {
    if (key === 'publishConfig') continue;
    next[key] = value;
    // The shared fields go right after `license`, where a reader looks for them.
    if (key === 'license') Object.assign(next, fields);
  }
  Object.assign(next, fields);
  if (Object.keys(publishConfig).length > 0) next.publishConfig = publishConfig;
  for (const key of [...Object.keys(fields), 'publishConfig']) {
    if (same(manifest[key], next[key])) continue;
    if (!fix) {
      problems.push(
        key === 'publishConfig'
          ? `publishConfig.exports must be exports without the ${SOURCE_CONDITION} condition`
          : `"${key}" must be ${JSON.stringify(next[key])}`,
      );
    }
  }
  if (fix && !same(manifest, next)) {
    writeFileSync(join(dir, 'package.json'), `${JSON.stringify(next, null, 2)}\n`);
  }
  return problems;
}

/** Every file path named by an exports/bin/main/types value (conditions and arrays walked). */
function namedPaths(manifest) {
  const paths = [];
  const walk = (value) => {
    if (typeof value === 'string') paths.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(manifest.exports);
  walk(typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin ?? {}));
  for (const key of ['main', 'module', 'types', 'typings']) walk(manifest[key]);
  return paths;
}

function run(command, commandArgs, options) {
  try {
    return {
      ok: true,
      output: execFileSync(command, commandArgs, { encoding: 'utf8', stdio: 'pipe', ...options }),
    };
  } catch (error) {
    return { ok: false, output: `${error.stdout ?? ''}${error.stderr ?? ''}` || String(error) };
  }
}

/** Packs the package in `dir` into `into`; returns the tarball path and its unpacked `package/`. */
function pack(dir, into) {
  mkdirSync(into, { recursive: true });
  const packed = run('pnpm', ['pack', '--pack-destination', into], { cwd: dir });
  if (!packed.ok) throw new Error(`pnpm pack failed:\n${packed.output}`);
  const tarball = readdirSync(into).find((file) => file.endsWith('.tgz'));
  if (!tarball) throw new Error(`pnpm pack wrote no tarball:\n${packed.output}`);
  const unpacked = join(into, 'unpacked');
  mkdirSync(unpacked);
  execFileSync('tar', ['-xzf', join(into, tarball), '-C', unpacked]);
  return { tarball: join(into, tarball), root: join(unpacked, 'package') };
}

function checkPacked(root) {
  const problems = [];
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  if (hasSourceCondition(manifest)) problems.push(`the packed package.json still names ${SOURCE_CONDITION}`);
  for (const path of namedPaths(manifest)) {
    if (path.includes('*')) problems.push(`${path}: patterns are not checked here; name files`);
    else if (!existsSync(join(root, path))) problems.push(`${path} is named in package.json but not packed`);
  }
  if (!existsSync(join(root, 'LICENSE'))) problems.push('LICENSE is not packed');
  return { problems, manifest };
}

async function checkPublint(tarball, manifest) {
  const bytes = readFileSync(tarball);
  const { messages, pkg } = await publint({
    // The Buffer's own bytes: a small file's Buffer may be a slice of a larger pooled ArrayBuffer.
    pack: { tarball: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) },
    level: 'suggestion',
    strict: true,
  });
  return messages.map(
    (message) => `${message.type}: ${formatMessage(message, pkg ?? manifest, { color: false })}`,
  );
}

function checkTypes(tarball, manifest) {
  if (!manifest.exports && !manifest.types) return { skipped: 'no types to check (a command)' };
  const result = run(process.execPath, [
    ATTW,
    tarball,
    '--profile',
    'esm-only',
    '--format',
    'ascii',
    '--no-emoji',
    '--no-color',
  ]);
  return { problems: result.ok ? [] : [result.output.trim()] };
}

const results = [];
function record(pkg, check, problems, note) {
  results.push({ title: `${pkg.name}: ${check}`, problems });
  const status = problems.length > 0 ? 'FAIL' : note ? `ok (${note})` : 'ok';
  console.log(`${status.padEnd(4)} ${pkg.name}: ${check}`);
  for (const problem of problems) console.log(problem.replace(/^/gm, '       '));
}

const packages = publishedPackages();
const scratch = manifestsOnly ? undefined : mkdtempSync(join(tmpdir(), 'ux-check-packages-'));
try {
  for (const pkg of packages) {
    record(pkg, 'manifest', checkManifest(pkg));
    if (!scratch) continue;
    let packed;
    try {
      packed = pack(pkg.dir, join(scratch, pkg.name.replace(/[@/]/g, '_')));
    } catch (error) {
      record(pkg, 'packed', [error.message]);
      continue;
    }
    const { problems, manifest } = checkPacked(packed.root);
    record(pkg, 'packed', problems);
    record(pkg, 'publint', await checkPublint(packed.tarball, manifest));
    const types = checkTypes(packed.tarball, manifest);
    record(pkg, 'are-the-types-wrong', types.problems ?? [], types.skipped);
  }
} finally {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
}

const failed = results.filter((result) => result.problems.length > 0);
if (jsonReport) {
  const assertionResults = results.map((result) => ({
    title: result.title,
    fullName: `check-packages ${result.title}`,
    status: result.problems.length > 0 ? 'failed' : 'passed',
    failureMessages: result.problems,
  }));
  const report = {
    numTotalTests: results.length,
    numPassedTests: results.length - failed.length,
    numFailedTests: failed.length,
    testResults: [
      {
        name: 'scripts/check-packages.mjs',
        status: failed.length > 0 ? 'failed' : 'passed',
        assertionResults,
      },
    ],
  };
  writeFileSync(jsonReport, `${JSON.stringify(report, null, 2)}\n`);
}
console.log(`check-packages: ${results.length - failed.length} of ${results.length} checks passed`);
process.exitCode = failed.length > 0 ? 1 : 0;
