import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type CodeCacheState, loadCommandBundle, writeCodeCaches } from './command-bundle.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A bundle as the build writes them: CommonJS, a top level with no side effects, requires beside it. */
function bundleDir(body = 'exports.answer = () => helper.value;'): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'ux-command-bundle-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'helper.cjs'), 'exports.value = 42;\n');
  const file = join(dir, 'demo-command.cjs');
  writeFileSync(file, `"use strict";const helper=require("./helper.cjs");${body}\n`);
  return { dir, file };
}

function load(file: string): { exports: Record<string, () => unknown>; state?: CodeCacheState } {
  let state: CodeCacheState | undefined;
  const exports = loadCommandBundle(file, (found) => {
    state = found;
  }) as Record<string, () => unknown>;
  return { exports, ...(state ? { state } : {}) };
}

describe('loadCommandBundle', () => {
  it('loads a bundle as require would: exports, require beside it, __filename and module', () => {
    const { file } = bundleDir(
      'exports.answer = () => helper.value; exports.where = () => [__filename, typeof module.exports];',
    );
    const { exports, state } = load(file);
    expect(exports.answer?.()).toBe(42);
    expect(exports.where?.()).toEqual([file, 'object']);
    expect(state).toBe('missing');
  });

  it('uses the cache the build wrote for the same bundle', () => {
    const { file } = bundleDir();
    writeCodeCaches([file]);
    expect(readFileSync(`${file}.code-cache`, 'latin1')).toMatch(/^ux-code-cache-2 [0-9a-f]{64}\n/);
    const { exports, state } = load(file);
    expect(state).toBe('used');
    expect(exports.answer?.()).toBe(42);
  });

  it('ignores a cache made for another build of the bundle, even of the same size', () => {
    const { file } = bundleDir('exports.answer = () => helper.value + 0;');
    writeCodeCaches([file]);
    // Same length, other code: V8's own check (the source length) would take the old cache.
    writeFileSync(
      file,
      `"use strict";const helper=require("./helper.cjs");exports.answer = () => helper.value + 1;\n`,
    );
    const { exports, state } = load(file);
    expect(state).toBe('stale');
    expect(exports.answer?.()).toBe(43);
  });

  it('compiles from source when V8 rejects the cache (made from other code, by another Node)', () => {
    const made = bundleDir('exports.answer = () => helper.value;');
    writeCodeCaches([made.file]);
    const data = readFileSync(`${made.file}.code-cache`);
    const other = bundleDir('exports.answer = () => helper.value * 2;');
    // The header names the other bundle, the data is V8's for the first: V8's own check must refuse it.
    const hash = createHash('sha256').update(readFileSync(other.file)).digest('hex');
    writeFileSync(
      `${other.file}.code-cache`,
      Buffer.concat([Buffer.from(`ux-code-cache-2 ${hash}\n`), data.subarray(data.indexOf(10) + 1)]),
    );
    const { exports, state } = load(other.file);
    expect(state).toBe('rejected');
    expect(exports.answer?.()).toBe(84);
  });

  it('writes the cache atomically and leaves nothing else behind', () => {
    const { dir, file } = bundleDir();
    writeCodeCaches([file]);
    writeCodeCaches([file]);
    expect(readdirSync(dir).sort()).toEqual([
      'demo-command.cjs',
      'demo-command.cjs.code-cache',
      'helper.cjs',
    ]);
  });
});
