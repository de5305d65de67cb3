#!/usr/bin/env node
// Rewrites import specifiers after `@ux/protocol` was split into the contract (`@ux/protocol`),
// the runtime helpers (`@ux/protocol-utils`) and the conformance kit (`@ux/protocol-testing`).
// A name imported from an entry of `@ux/protocol` that no longer has it moves to the package that
// exports it now; `@ux/protocol/testing` becomes `@ux/protocol-testing`. Code files and the
// TypeScript/JavaScript code blocks of Markdown files are rewritten; each package that now imports a
// new package gets it in its package.json (a dependency when its published sources do, else a
// devDependency). Run `pnpm exec biome check --write` afterwards to sort and format the imports.
//
//   node scripts/codemod-protocol-split.mjs [paths…]    (default: every tracked file)
//
// It prints each rewritten file, and each import it could not place (a name no package exports).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CODE = /\.(?:[cm]?[jt]sx?)$/;
const FENCE =
  /^(\s*)(`{3,}|~{3,})\s*(ts|tsx|typescript|js|jsx|javascript|mjs|cjs|mts)\b[^\n]*\n([\s\S]*?)^\1\2\s*$/gm;
const RENAMED = { '@ux/protocol/testing': '@ux/protocol-testing' };
const OLD = ['@ux/protocol', '@ux/protocol/core', '@ux/protocol/errors', '@ux/protocol/testing'];
// Where a name that left the contract lives now, in the order packages are asked.
const HOMES = ['@ux/protocol-utils', '@ux/protocol-testing'];
const PACKAGE_DIRS = {
  '@ux/protocol': 'packages/protocol',
  '@ux/protocol-utils': 'packages/protocol-utils',
  '@ux/protocol-testing': 'packages/protocol-testing',
};

function parse(file, text) {
  const kind = /\.[cm]?js$/.test(file)
    ? ts.ScriptKind.JS
    : /x$/.test(file)
      ? ts.ScriptKind.TSX
      : ts.ScriptKind.TS;
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
}

/** The names a module exports, following `export *` and `export { … } from` through the sources. */
function exportedNames(file, seen = new Set()) {
  const names = new Set();
  if (seen.has(file) || !existsSync(file)) return names;
  seen.add(file);
  const source = parse(file, readFileSync(file, 'utf8'));
  for (const statement of source.statements) {
    if (ts.isExportDeclaration(statement)) {
      if (!statement.exportClause) {
        const target = resolve(dirname(file), statement.moduleSpecifier.text.replace(/\.js$/, '.ts'));
        for (const name of exportedNames(target, seen)) names.add(name);
      } else if (ts.isNamedExports(statement.exportClause)) {
        for (const element of statement.exportClause.elements) names.add(element.name.text);
      }
    } else if (
      ts.canHaveModifiers(statement) &&
      ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
    ) {
      if (ts.isVariableStatement(statement)) {
        for (const d of statement.declarationList.declarations)
          if (ts.isIdentifier(d.name)) names.add(d.name.text);
      } else if (statement.name) names.add(statement.name.text);
    }
  }
  return names;
}

/** `specifier → names` for every entry of the three packages, read from their sources. */
function entryNames() {
  const entries = new Map();
  for (const [name, dir] of Object.entries(PACKAGE_DIRS)) {
    const manifest = JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8'));
    for (const [key, value] of Object.entries(manifest.exports ?? {})) {
      const match = /^\.\/dist\/(.+)\.d\.ts$/.exec(value?.types ?? '');
      if (!match) continue;
      const specifier = key === '.' ? name : `${name}/${key.slice(2)}`;
      entries.set(specifier, exportedNames(join(ROOT, dir, 'src', `${match[1]}.ts`)));
    }
  }
  return entries;
}

const entries = entryNames();

/** Where `name`, imported from `specifier`, is found now (the same specifier when it stayed). */
function homeOf(name, specifier) {
  const renamed = RENAMED[specifier] ?? specifier;
  if (entries.get(renamed)?.has(name)) return renamed;
  for (const home of HOMES) if (entries.get(home)?.has(name)) return home;
  return undefined;
}

/** Rewrites the import and export declarations of one chunk of code; returns the new text or undefined. */
function rewrite(path, text, problems, imported) {
  const source = parse(path, text);
  const edits = [];
  for (const statement of source.statements) {
    if (!(ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement))) continue;
    const literal = statement.moduleSpecifier;
    if (!literal || !ts.isStringLiteral(literal) || !OLD.includes(literal.text)) continue;
    const specifier = literal.text;
    const clause = ts.isImportDeclaration(statement) ? statement.importClause : statement;
    const named = ts.isImportDeclaration(statement) ? clause?.namedBindings : statement.exportClause;
    if (!named || (!ts.isNamedImports(named) && !ts.isNamedExports(named))) {
      const renamed = RENAMED[specifier];
      if (renamed)
        edits.push({ start: literal.getStart(source), end: literal.getEnd(), text: `'${renamed}'` });
      else if (named || clause?.name)
        problems.push(`${path}: keeps a whole-module import of ${specifier}; check its names by hand`);
      continue;
    }
    const groups = new Map();
    for (const element of named.elements) {
      const name = (element.propertyName ?? element.name).text;
      const home = homeOf(name, specifier);
      if (!home) problems.push(`${path}: ${name} (from ${specifier}) is exported by none of the packages`);
      const target = home ?? specifier;
      if (!groups.has(target)) groups.set(target, []);
      groups.get(target).push(element.getText(source));
      imported.add(target);
    }
    if (groups.size === 1 && groups.has(specifier)) continue;
    const keyword = ts.isImportDeclaration(statement) ? 'import' : 'export';
    const typeOnly = ts.isImportDeclaration(statement) ? clause.isTypeOnly : statement.isTypeOnly;
    const lines = [...groups].map(
      ([target, elements]) =>
        `${keyword} ${typeOnly ? 'type ' : ''}{ ${elements.join(', ')} } from '${target}';`,
    );
    edits.push({ start: statement.getStart(source), end: statement.getEnd(), text: lines.join('\n') });
  }
  // Dynamic imports keep their specifier; say when a name they take has moved.
  const visit = (node) => {
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteral(argument) && OLD.includes(argument.text)) {
        let outer = node;
        while (ts.isAwaitExpression(outer.parent) || ts.isParenthesizedExpression(outer.parent))
          outer = outer.parent;
        if (
          ts.isPropertyAccessExpression(outer.parent) &&
          homeOf(outer.parent.name.text, argument.text) !== argument.text
        )
          problems.push(
            `${path}: import('${argument.text}').${outer.parent.name.text} has moved; fix by hand`,
          );
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (edits.length === 0) return undefined;
  let out = text;
  for (const edit of edits.sort((a, b) => b.start - a.start))
    out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  return out;
}

/** The workspace package directory holding `path` (`packages/x`, `apps/x`, `tooling/x`, `bench`). */
function packageDirOf(path) {
  const parts = path.split('/');
  const dir = ['packages', 'apps', 'tooling'].includes(parts[0]) ? parts.slice(0, 2).join('/') : parts[0];
  return existsSync(join(ROOT, dir, 'package.json')) ? dir : undefined;
}

/** Test code: never part of a published build. */
function isTestCode(path) {
  return (
    /\.test\.[cm]?[jt]sx?$/.test(path) ||
    /(^|\/)(test|tests|testing|fixtures)\//.test(path) ||
    /test-(support|kit|environments|harness)/.test(path)
  );
}

function addDependency(dir, name, asDev) {
  const file = join(ROOT, dir, 'package.json');
  const manifest = JSON.parse(readFileSync(file, 'utf8'));
  if (manifest.name === name) return false;
  const field = asDev ? 'devDependencies' : 'dependencies';
  if (manifest.dependencies?.[name] || (asDev && manifest.devDependencies?.[name])) return false;
  if (!asDev && manifest.devDependencies?.[name]) delete manifest.devDependencies[name];
  const range = asDev || manifest.private ? 'workspace:*' : 'workspace:^';
  manifest[field] = Object.fromEntries(
    Object.entries({ ...manifest[field], [name]: range }).sort(([a], [b]) => a.localeCompare(b)),
  );
  writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
  return true;
}

function main() {
  const given = process.argv.slice(2);
  const files = given.length
    ? given.map((p) => relative(ROOT, resolve(p)))
    : execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
        .split('\n')
        .filter(Boolean);
  const problems = [];
  const needs = new Map(); // package dir → Map(new package → needed at runtime)
  for (const path of files) {
    if (!(CODE.test(path) || path.endsWith('.md')) || /(^|\/)(dist|node_modules)\//.test(path)) continue;
    if (/(^|\/)CHANGELOG\.md$/.test(path) || path.startsWith('.changeset/')) continue;
    const full = join(ROOT, path);
    if (!existsSync(full)) continue;
    const text = readFileSync(full, 'utf8');
    if (!text.includes('@ux/protocol')) continue;
    const imported = new Set();
    let out;
    if (path.endsWith('.md')) {
      let changed = false;
      out = text.replace(FENCE, (block, _indent, _fence, _lang, code) => {
        const next = rewrite(`${path}.ts`, code, problems, new Set());
        if (next === undefined) return block;
        changed = true;
        return block.replace(code, () => next);
      });
      if (!changed) out = undefined;
    } else {
      out = rewrite(path, text, problems, imported);
      const dir = packageDirOf(path);
      const own = Object.entries(PACKAGE_DIRS).find(([, d]) => d === dir)?.[0];
      if (dir) {
        for (const target of imported) {
          if (!HOMES.includes(target) || target === own) continue;
          if (!needs.has(dir)) needs.set(dir, new Map());
          const runtime = target !== '@ux/protocol-testing' && !isTestCode(path);
          needs.get(dir).set(target, (needs.get(dir).get(target) ?? false) || runtime);
        }
      }
    }
    if (out !== undefined && out !== text) {
      writeFileSync(full, out);
      console.log(`rewrote ${path}`);
    }
  }
  for (const [dir, targets] of needs) {
    for (const [target, runtime] of targets) {
      if (addDependency(dir, target, !runtime)) console.log(`${dir}/package.json: + ${target}`);
    }
  }
  for (const problem of problems) console.error(`codemod: ${problem}`);
  if (problems.length > 0) process.exitCode = 1;
}

main();
