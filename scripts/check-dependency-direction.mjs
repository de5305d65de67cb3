// CI gate: every import in every workspace package (sources and tests alike) keeps the one direction of
// dependencies drawn in docs/architecture.md. It reads each `.ts`/`.mts`/`.mjs` file a package has in
// git (new files included), finds its imports with TypeScript's own pre-processor (static, dynamic,
// `export … from`, `require`) plus `import.meta.resolve` and paths made from `import.meta.url`
// (`new URL('../x', import.meta.url)`, `join(dirname(fileURLToPath(import.meta.url)), '../x')`), and
// fails when
//   (a) an import names a workspace package the importing package does not declare (a published
//       package's source must take it from `dependencies` or `peerDependencies`, not devDependencies);
//   (b) a relative import leaves the package directory (a sibling's `dist/` or `src/`);
//   (c) a published package's source imports a test helper (its `test/`, a `*.test.ts`, fixtures) or a
//       test-only package (a private workspace package, a conformance kit's `./testing` entry or
//       `*-testing` package, vitest) it does not declare as a peer (a conformance kit that runs inside
//       the user's test runner does);
//   (d) an import goes against the direction: a package's files may import only the packages ALLOWED
//       names for it; test files may also import the private tooling packages.
// Each failure names file:line, the import and the rule. Run from the root: `pnpm run check` runs it.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/**
 * The one direction (docs/architecture.md): what each workspace package may import, sources and tests
 * alike. `'*'` marks the private composers (the CLI wires every package; the end-to-end suites and the
 * benchmarks compose them as an embedder would). A new package is added here in the change that adds
 * it.
 */
const ALLOWED = {
  '@ux/protocol': [],
  '@ux/protocol-utils': ['@ux/protocol'],
  '@ux/protocol-testing': ['@ux/protocol'],
  '@ux/apply-patch': ['@ux/protocol', '@ux/protocol-utils'],
  '@ux/control': ['@ux/protocol', '@ux/protocol-utils'],
  '@ux/network-proxy': ['@ux/protocol', '@ux/protocol-utils'],
  '@ux/features': ['@ux/protocol', '@ux/protocol-utils'],
  '@ux/config': ['@ux/protocol', '@ux/protocol-utils', '@ux/features', '@ux/network-proxy'],
  '@ux/spawn': ['@ux/protocol', '@ux/protocol-utils'],
  '@ux/orchestrator': ['@ux/protocol', '@ux/protocol-utils'],
  '@ux/exec-server-client': ['@ux/protocol', '@ux/protocol-utils'],
  '@ux/zsh-fork': ['@ux/protocol', '@ux/protocol-utils', '@ux/spawn'],
  '@ux/exec-server': ['@ux/protocol', '@ux/protocol-utils', '@ux/spawn'],
  '@ux/unified-exec': [
    '@ux/protocol',
    '@ux/protocol-utils',
    '@ux/features',
    '@ux/orchestrator',
    '@ux/spawn',
    '@ux/apply-patch',
  ],
  '@ux/sandbox-bwrap': ['@ux/protocol', '@ux/protocol-utils'],
  '@ux/sandbox-seatbelt': ['@ux/protocol', '@ux/protocol-utils'],
  '@ux/sandbox-windows-token': ['@ux/protocol', '@ux/protocol-utils'],
  // The documented exception: the Linux parts of bwrap that are not about bubblewrap (`./linux`).
  '@ux/sandbox-landlock': ['@ux/protocol', '@ux/protocol-utils', '@ux/sandbox-bwrap'],
  '@ux/door': [
    '@ux/protocol',
    '@ux/protocol-utils',
    '@ux/features',
    '@ux/config',
    '@ux/orchestrator',
    '@ux/spawn',
    '@ux/unified-exec',
    '@ux/sandbox-bwrap',
    '@ux/sandbox-landlock',
    '@ux/sandbox-seatbelt',
    '@ux/sandbox-windows-token',
  ],
  '@ux/cli': '*',
  '@ux/test-utils': ['@ux/protocol', '@ux/protocol-utils'],
  '@ux/tsconfig': [],
  '@ux/e2e': '*',
  // README and docs code blocks are type-checked inside this package, and they show every package.
  '@ux/readme-check': '*',
  // The examples are what an embedder writes: the one-call door and the contract's types.
  '@ux/example-hello-door': ['@ux/door', '@ux/protocol'],
  '@ux/example-reviewer': ['@ux/door', '@ux/protocol'],
  '@ux/example-vercel-ai': ['@ux/door', '@ux/protocol'],
  '@ux/example-openai-functions': ['@ux/door', '@ux/protocol'],
  '@ux/bench': '*',
};

/** Packages that exist only to test: never imported by a published package's source. */
const TEST_ONLY_EXTERNAL = ['vitest', '@vitest/'];

/** A conformance kit: a `./testing` entry (`@ux/protocol/testing`) or a `*-testing` package. */
const isTestingEntry = (specifier) => /\/testing(\/|$)/.test(specifier) || /-testing(\/|$)/.test(specifier);

const root = process.cwd();
const git = (...args) => execFileSync('git', args, { encoding: 'utf8', cwd: root });

/** Workspace package directories from pnpm-workspace.yaml's `packages:` list (`dir/*` or `dir`). */
function workspaceDirs() {
  const yaml = readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8');
  const block = /^packages:\n((?:\s+-.*\n?)+)/m.exec(yaml);
  if (!block) throw new Error('pnpm-workspace.yaml: no packages list');
  const dirs = [];
  for (const line of block[1].split('\n')) {
    const glob = /^\s+-\s*['"]?([^'"\s]+)['"]?/.exec(line)?.[1];
    if (!glob) continue;
    if (glob.endsWith('/*')) {
      const parent = glob.slice(0, -2);
      for (const child of git('ls-files', '--cached', '--others', '--exclude-standard', parent)
        .split('\n')
        .map((file) => /^[^/]+\/[^/]+\/package\.json$/.exec(file)?.[0])
        .filter(Boolean)) {
        dirs.push(dirname(child));
      }
    } else if (existsSync(join(root, glob, 'package.json'))) dirs.push(glob);
  }
  return dirs;
}

function loadPackages() {
  return workspaceDirs().map((dir) => {
    const manifest = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'));
    return {
      dir,
      name: manifest.name,
      published: !manifest.private,
      isTooling: dir.startsWith('tooling/'),
      runtime: new Set([
        ...Object.keys(manifest.dependencies ?? {}),
        ...Object.keys(manifest.peerDependencies ?? {}),
        ...Object.keys(manifest.optionalDependencies ?? {}),
      ]),
      peers: new Set(Object.keys(manifest.peerDependencies ?? {})),
      dev: new Set(Object.keys(manifest.devDependencies ?? {})),
    };
  });
}

/** `@scope/name/sub` → `@scope/name`; `name/sub` → `name`. */
const packageOf = (specifier) =>
  specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];

/** Test code: a package's `test/` and `fixtures/`, `*.test.ts`, and config files at its root. */
const isTestFile = (rel) =>
  /(^|\/)(test|fixtures)\//.test(rel) || /\.test\.m?ts$/.test(rel) || /^[^/]*\.config\.m?ts$/.test(rel);

/**
 * Every import of a file with its line: `{ specifier, line, path }`; `path` marks a file path made from
 * `import.meta.url` rather than a module specifier.
 */
function importsOf(text, fileName) {
  const found = [];
  const lineOf = (pos) => text.slice(0, pos).split('\n').length;
  const info = ts.preProcessFile(text, true, true);
  for (const ref of info.importedFiles) {
    found.push({ specifier: ref.fileName, line: lineOf(ref.pos), path: false });
  }
  // Not seen by the pre-processor: module resolution by hand, and files found next to this one.
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false);
  const visit = (node) => {
    if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
      const callee = node.expression.getText(source);
      const [first, second] = node.arguments ?? [];
      const isResolve = callee === 'import.meta.resolve' && first && ts.isStringLiteralLike(first);
      const isUrl =
        ts.isNewExpression(node) &&
        callee === 'URL' &&
        first &&
        ts.isStringLiteralLike(first) &&
        second?.getText(source) === 'import.meta.url' &&
        /^\.\.?(\/|$)/.test(first.text);
      if (isResolve || isUrl) {
        found.push({ specifier: first.text, line: lineOf(node.getStart(source)), path: Boolean(isUrl) });
      }
      // `join(dirname(fileURLToPath(import.meta.url)), '../…')`: a path beside this file.
      const rest = (node.arguments ?? []).slice(1);
      if (
        /^(path\.)?(join|resolve)$/.test(callee) &&
        first?.getText(source).replace(/\s/g, '') === 'dirname(fileURLToPath(import.meta.url))' &&
        rest.length > 0 &&
        rest.every((arg) => ts.isStringLiteralLike(arg))
      ) {
        const joined = posix.join('.', ...rest.map((arg) => arg.text));
        const specifier = joined.startsWith('.') ? joined : `./${joined}`;
        found.push({ specifier, line: lineOf(node.getStart(source)), path: true });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const packages = loadPackages();
const byName = new Map(packages.map((pkg) => [pkg.name, pkg]));
const tooling = new Set(packages.filter((pkg) => pkg.isTooling).map((pkg) => pkg.name));
const failures = [];

for (const pkg of packages) {
  const allowed = ALLOWED[pkg.name];
  if (allowed === undefined) {
    failures.push(
      `${pkg.dir}/package.json: ${pkg.name} is not in the direction table (ALLOWED in scripts/check-dependency-direction.mjs); add it with the packages it may import`,
    );
    continue;
  }
  // A nested workspace package (none today) would be checked on its own.
  const nested = packages.filter((other) => other !== pkg && other.dir.startsWith(`${pkg.dir}/`));
  const files = git('ls-files', '--cached', '--others', '--exclude-standard', '--', pkg.dir)
    .split('\n')
    .filter((file) => /\.(ts|mts|mjs)$/.test(file) && !/\.d\.m?ts$/.test(file))
    .filter((file) => !nested.some((other) => file.startsWith(`${other.dir}/`)))
    .filter((file) => existsSync(join(root, file)));
  for (const file of files) {
    const rel = relative(pkg.dir, file).split(sep).join('/');
    const testFile = isTestFile(rel);
    const text = readFileSync(join(root, file), 'utf8');
    for (const { specifier, line, path } of importsOf(text, file)) {
      const where = `${file}:${line}: '${specifier}'`;
      if (specifier.startsWith('.')) {
        const target = resolve(dirname(join(root, file)), specifier);
        const targetRel = relative(join(root, pkg.dir), target).split(sep).join('/');
        if (targetRel.startsWith('..')) {
          // A path may name the checkout itself (a benchmark walks it); never another package's files.
          const into = packages.find((other) => `${target}${sep}`.startsWith(join(root, other.dir) + sep));
          if (!path || into) {
            const fix = into
              ? `depend on ${into.name} and resolve it by name`
              : 'import it by its package name';
            failures.push(`${where} leaves ${pkg.dir}/ (rule b: ${fix})`);
          }
          continue;
        }
        if (targetRel === '') continue;
        if (pkg.published && !testFile && isTestFile(targetRel)) {
          failures.push(`${where} is a test helper imported by published source (rule c)`);
        }
        continue;
      }
      if (specifier.startsWith('node:')) continue;
      const name = packageOf(specifier);
      const workspace = byName.get(name);
      if (pkg.published && !testFile && name !== pkg.name) {
        const testOnly =
          (workspace && (!workspace.published || isTestingEntry(specifier))) ||
          TEST_ONLY_EXTERNAL.some((t) => specifier.startsWith(t));
        if (testOnly && !pkg.peers.has(name)) {
          failures.push(`${where} is a test-only package imported by published source (rule c)`);
          continue;
        }
      }
      if (!workspace || name === pkg.name) continue;
      const declared = pkg.runtime.has(name) || pkg.dev.has(name);
      if (!declared) {
        failures.push(`${where} is not declared in ${pkg.dir}/package.json (rule a)`);
      } else if (pkg.published && !testFile && !pkg.runtime.has(name)) {
        failures.push(
          `${where} is only a devDependency of ${pkg.name} but its published source imports it (rule a)`,
        );
      }
      const mayImport =
        allowed === '*' ||
        allowed.includes(name) ||
        (testFile && (tooling.has(name) || isTestingEntry(name)));
      if (!mayImport) {
        const allowedText = allowed.length ? allowed.join(', ') : 'no workspace package';
        failures.push(
          `${where} goes against the direction: ${pkg.name} may import ${allowedText}${testFile ? ' (and, in tests, the tooling packages and conformance kits)' : ''} (rule d, docs/architecture.md)`,
        );
      }
    }
  }
}

if (failures.length > 0) {
  for (const failure of failures) console.error(failure);
  console.error(`dependency direction: ${failures.length} import(s) break the rules above`);
  process.exit(1);
}
console.log(`dependency direction: ${packages.length} packages, every import keeps the direction`);
