#!/usr/bin/env node
// Every name on a contract package's entries must have a user outside the package: code in another
// package, an app, a test, a benchmark, an example, or a code block in the docs. A name nobody
// imports is either internal (drop it from the entry) or dead (delete it); either way it should not
// be a promise to plugin authors. Fails naming the package, the entry and the name of each.
//
// A use through any entry of the package counts for every entry that has the name (`@ux/protocol`
// re-exports its faster `./core` and `./errors` subsets). Dynamic imports count when they name what
// they take: `(await import(x)).name`, `const { a } = await import(x)`, or
// `Pick<typeof import(x), 'a' | 'b'>` for a module kept whole.
//
//   node scripts/check-exports.mjs            check
//   node scripts/check-exports.mjs --usage    also print who uses each name
//
// Reads sources with TypeScript's parser only (no type checking), so it runs in about a second.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CHECKED = ['packages/protocol', 'packages/protocol-utils', 'packages/protocol-testing'];
const CODE = /\.(?:[cm]?[jt]sx?)$/;
const FENCE =
  /^(\s*)(`{3,}|~{3,})\s*(ts|tsx|typescript|js|jsx|javascript|mjs|cjs|mts)\b[^\n]*\n([\s\S]*?)^\1\2\s*$/gm;

const showUsage = process.argv.includes('--usage');

/** The entries of a package: `{ specifier, file }`, from `exports` (`./dist/x.d.ts` → `src/x.ts`). */
function entriesOf(dir) {
  const manifest = JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8'));
  const entries = [];
  for (const [key, value] of Object.entries(manifest.exports ?? {})) {
    const types = typeof value === 'object' && value !== null ? value.types : undefined;
    const match = typeof types === 'string' ? /^\.\/dist\/(.+)\.d\.ts$/.exec(types) : null;
    if (!match) continue;
    const specifier = key === '.' ? manifest.name : `${manifest.name}/${key.slice(2)}`;
    entries.push({ specifier, file: join(ROOT, dir, 'src', `${match[1]}.ts`) });
  }
  return { name: manifest.name, entries };
}

function parse(file, text = readFileSync(file, 'utf8')) {
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, scriptKind(file));
}

function scriptKind(file) {
  if (/\.[cm]?tsx$/.test(file) || /\.jsx$/.test(file)) return ts.ScriptKind.TSX;
  if (/\.[cm]?js$/.test(file)) return ts.ScriptKind.JS;
  return ts.ScriptKind.TS;
}

function hasExportModifier(node) {
  return (
    ts.canHaveModifiers(node) &&
    (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
  );
}

/** The names a module file exports, following `export *` and `export { … } from` through the sources. */
function exportedNames(file, seen = new Set()) {
  const names = new Set();
  if (seen.has(file)) return names;
  seen.add(file);
  const source = parse(file);
  for (const statement of source.statements) {
    if (ts.isExportDeclaration(statement)) {
      if (!statement.exportClause) {
        const target = resolveRelative(file, statement.moduleSpecifier.text);
        for (const name of exportedNames(target, seen)) names.add(name);
      } else if (ts.isNamedExports(statement.exportClause)) {
        for (const element of statement.exportClause.elements) names.add(element.name.text);
      } else {
        names.add(statement.exportClause.name.text);
      }
    } else if (hasExportModifier(statement)) {
      if (ts.isVariableStatement(statement)) {
        for (const declaration of statement.declarationList.declarations) {
          if (ts.isIdentifier(declaration.name)) names.add(declaration.name.text);
        }
      } else if (statement.name) {
        names.add(statement.name.text);
      }
    }
  }
  return names;
}

function resolveRelative(from, specifier) {
  return resolve(dirname(from), specifier.replace(/\.js$/, '.ts'));
}

/** Files that may use the packages: tracked and untracked-but-not-ignored, outside `dist/`. */
function candidateFiles() {
  const out = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return out
    .split('\0')
    .filter((path) => path && (CODE.test(path) || path.endsWith('.md')) && !/(^|\/)dist\//.test(path));
}

/** Adds to `uses` (name → users) every name `text` imports from one of `specifiers`. */
function collectUses(path, text, specifiers, uses) {
  const source = parse(path, text);
  const add = (specifier, name) => {
    if (!specifiers.has(specifier)) return;
    const users = uses.get(name) ?? new Set();
    users.add(path);
    uses.set(name, users);
  };
  const namespaces = new Map(); // local namespace name → specifier
  const visit = (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      const specifier = ts.isStringLiteral(node.moduleSpecifier) ? node.moduleSpecifier.text : undefined;
      if (specifier && specifiers.has(specifier)) {
        if (ts.isImportDeclaration(node)) {
          const bindings = node.importClause?.namedBindings;
          if (bindings && ts.isNamedImports(bindings)) {
            for (const element of bindings.elements)
              add(specifier, (element.propertyName ?? element.name).text);
          } else if (bindings && ts.isNamespaceImport(bindings)) {
            namespaces.set(bindings.name.text, specifier);
          }
        } else if (node.exportClause && ts.isNamedExports(node.exportClause)) {
          for (const element of node.exportClause.elements)
            add(specifier, (element.propertyName ?? element.name).text);
        } else {
          add(specifier, '*');
        }
      }
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteral(argument) && specifiers.has(argument.text)) {
        for (const name of namesTakenFromDynamicImport(node)) add(argument.text, name);
      }
    } else if (ts.isImportTypeNode(node)) {
      const literal = ts.isLiteralTypeNode(node.argument) ? node.argument.literal : undefined;
      if (literal && ts.isStringLiteral(literal) && specifiers.has(literal.text)) {
        if (node.qualifier)
          add(
            literal.text,
            ts.isIdentifier(node.qualifier) ? node.qualifier.text : node.qualifier.left.getText(source),
          );
        else for (const name of namesPicked(node)) add(literal.text, name);
      }
    } else if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression)) {
      const specifier = namespaces.get(node.expression.text);
      if (specifier) add(specifier, node.name.text);
    } else if (ts.isQualifiedName(node) && ts.isIdentifier(node.left)) {
      const specifier = namespaces.get(node.left.text);
      if (specifier) add(specifier, node.right.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}

/** `(await import(x)).name`, `const { a, b } = await import(x)`, `import(x).then(({ a }) => …)`. */
function namesTakenFromDynamicImport(call) {
  let node = call;
  while (ts.isAwaitExpression(node.parent) || ts.isParenthesizedExpression(node.parent)) node = node.parent;
  const parent = node.parent;
  if (ts.isPropertyAccessExpression(parent) && parent.expression === node) {
    if (parent.name.text !== 'then') return [parent.name.text];
    const callback = parent.parent.arguments?.[0];
    const first =
      callback && (ts.isArrowFunction(callback) || ts.isFunctionExpression(callback))
        ? callback.parameters[0]
        : undefined;
    if (first && ts.isObjectBindingPattern(first.name)) return bindingNames(first.name);
  }
  if (ts.isVariableDeclaration(parent) && ts.isObjectBindingPattern(parent.name))
    return bindingNames(parent.name);
  // Anything else (the module kept whole) must say what it uses through a `Pick<typeof import(x), …>`.
  return [];
}

function bindingNames(pattern) {
  return pattern.elements.map((element) => (element.propertyName ?? element.name).getText());
}

/** `Pick<typeof import(x), 'a' | 'b'>`: the names picked. */
function namesPicked(importType) {
  const reference = importType.parent;
  if (!ts.isTypeReferenceNode(reference) || reference.typeName.getText() !== 'Pick') return [];
  const keys = reference.typeArguments?.[1];
  const literals = keys && ts.isUnionTypeNode(keys) ? keys.types : keys ? [keys] : [];
  return literals.flatMap((type) =>
    ts.isLiteralTypeNode(type) && ts.isStringLiteral(type.literal) ? [type.literal.text] : [],
  );
}

function main() {
  const packages = CHECKED.map((dir) => ({ dir, ...entriesOf(dir) }));
  const specifiers = packages.flatMap((pkg) => pkg.entries.map((entry) => entry.specifier));
  // Per package, name → files outside the package that import it (through any of its entries).
  const uses = new Map(packages.map((pkg) => [pkg.dir, new Map()]));
  for (const path of candidateFiles()) {
    let text;
    try {
      text = readFileSync(join(ROOT, path), 'utf8');
    } catch {
      continue; // deleted, still listed by git
    }
    if (!specifiers.some((specifier) => text.includes(specifier))) continue;
    const isMarkdown = path.endsWith('.md');
    const chunks = isMarkdown ? [...text.matchAll(FENCE)].map((match) => match[4]) : [text];
    for (const pkg of packages) {
      if (path.startsWith(`${pkg.dir}/`)) continue;
      const own = new Set(pkg.entries.map((entry) => entry.specifier));
      for (const chunk of chunks)
        collectUses(isMarkdown ? `${path}.ts` : path, chunk, own, uses.get(pkg.dir));
    }
  }
  const unused = [];
  for (const pkg of packages) {
    const used = uses.get(pkg.dir);
    for (const entry of pkg.entries) {
      for (const name of [...exportedNames(entry.file)].sort()) {
        const users = [...(used.get(name) ?? [])].map((user) => user.replace(/\.md\.ts$/, '.md')).sort();
        if (showUsage) console.log(`${entry.specifier}\t${name}\t${users.length}\t${users.join(' ')}`);
        if (users.length === 0 && !used.has('*'))
          unused.push(`package ${pkg.name}, entry ${entry.specifier}: ${name}`);
      }
    }
  }
  if (unused.length > 0) {
    console.error(
      `check-exports: ${unused.length} exported name(s) have no user outside their package:\n` +
        unused.map((line) => `  ${line}`).join('\n') +
        '\nMake each one internal (drop it from the entry) or delete it: a name on an entry is a promise to users.',
    );
    process.exit(1);
  }
  const count = packages.reduce((sum, pkg) => sum + pkg.entries.length, 0);
  console.log(
    `check-exports: every name on the ${count} entries of ${packages.map((p) => p.name).join(', ')} has a user`,
  );
}

main();
