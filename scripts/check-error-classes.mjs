// Check run by `pnpm run check`: no exported class in any workspace package's `src/` extends `Error`
// (or another built-in error) directly. Every error a caller can catch is a `UxError` from
// `@ux/protocol`, with a code from the closed set in docs/errors.md and a `Symbol.for` marker
// (docs/errors.md says why). A class that never leaves its module may stay plain; it is not exported.
// The one exception is `UxError` itself.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const BUILT_IN_ERRORS = new Set([
  'Error',
  'TypeError',
  'RangeError',
  'SyntaxError',
  'ReferenceError',
  'EvalError',
  'URIError',
  'AggregateError',
]);
const ALLOWED = new Set(['packages/protocol/src/errors/ux-error.ts:UxError']);

const root = join(import.meta.dirname, '..');

/** `src/` of every workspace package (packages/*, apps/*, tooling/*), new ones included. */
function sourceRoots() {
  const roots = [];
  for (const group of ['packages', 'apps', 'tooling']) {
    const dir = join(root, group);
    if (!existsSync(dir)) continue;
    for (const entry of readdirSync(dir)) {
      const src = join(dir, entry, 'src');
      if (existsSync(join(dir, entry, 'package.json')) && existsSync(src)) roots.push(src);
    }
  }
  return roots;
}

function* sourceFiles(dir) {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) {
      if (entry !== 'node_modules' && entry !== 'dist') yield* sourceFiles(path);
    } else if (/\.(c|m)?tsx?$/.test(entry) && !/\.d\.(c|m)?ts$/.test(entry)) {
      yield path;
    }
  }
}

/** The name a heritage clause extends, when it is a built-in error (`Error`, `globalThis.Error`). */
function builtInBase(clause) {
  for (const type of clause.types) {
    const expression = type.expression;
    const name = ts.isIdentifier(expression)
      ? expression.text
      : ts.isPropertyAccessExpression(expression) && expression.expression.getText() === 'globalThis'
        ? expression.name.text
        : undefined;
    if (name && BUILT_IN_ERRORS.has(name)) return name;
  }
  return undefined;
}

/** Problems in one file: exported classes (directly, or by `export { … }`) whose base is a built-in error. */
export function checkSource(fileName, text) {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const plain = new Map();
  const exportedNames = new Set();
  const visit = (node) => {
    if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) {
      const clause = node.heritageClauses?.find((c) => c.token === ts.SyntaxKind.ExtendsKeyword);
      const base = clause && builtInBase(clause);
      if (base) {
        const name = node.name?.text ?? '(anonymous class)';
        const exported =
          ts.isClassDeclaration(node) &&
          node.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) === true;
        plain.set(name, {
          base,
          exported,
          line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1,
        });
      }
    }
    if (
      ts.isExportDeclaration(node) &&
      !node.moduleSpecifier &&
      node.exportClause &&
      ts.isNamedExports(node.exportClause)
    ) {
      for (const element of node.exportClause.elements)
        exportedNames.add((element.propertyName ?? element.name).text);
    }
    if (ts.isExportAssignment(node) && ts.isIdentifier(node.expression))
      exportedNames.add(node.expression.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  const problems = [];
  for (const [name, found] of plain) {
    if (!found.exported && !exportedNames.has(name)) continue;
    if (ALLOWED.has(`${fileName}:${name}`)) continue;
    problems.push(
      `${fileName}:${found.line}: exported class ${name} extends ${found.base}; extend UxError from @ux/protocol ` +
        '(its own marker, a code from docs/errors.md), or keep the class private to its module',
    );
  }
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const problems = [];
  let files = 0;
  for (const src of sourceRoots()) {
    for (const path of sourceFiles(src)) {
      files += 1;
      problems.push(...checkSource(relative(root, path), readFileSync(path, 'utf8')));
    }
  }
  if (problems.length > 0) {
    for (const problem of problems) console.error(`error classes: ${problem}`);
    process.exit(1);
  }
  console.log(`error classes: ${files} source files, every exported error class extends UxError`);
}
