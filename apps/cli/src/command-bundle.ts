import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { Script } from 'node:vm';

/**
 * Loads a command bundle (`dist/<name>-command.cjs`) as `require` would, but with V8's code cache
 * written beside it at build time (`<bundle>.code-cache`): parsing the 650 KB of `ux exec`'s bundle
 * was about 12 ms of every start, a third of the command's own work; with the cache V8 deserialises
 * what it compiled then (the bundle's top level) instead.
 *
 * The cache is used only for the bundle it was made from: its header holds the SHA-256 of the
 * bundle's text (about half a millisecond here; V8's own check compares only the source's length).
 * V8 itself rejects a cache made by another V8 or under other flags; then, and when the cache is
 * missing, the bundle is compiled from its source, as `require` would. The cache sits with the CLI's
 * program files, which every sandbox gets read-only (session-protection.ts): it is as trusted as the
 * bundle it speeds up.
 */
export function loadCommandBundle(file: string, onCache?: (state: CodeCacheState) => void): unknown {
  const { source, identity } = readBundle(file);
  const cached = cachedDataFor(file, identity);
  const script = compile(file, source, cached.data);
  onCache?.(cached.data === undefined ? cached.state : script.cachedDataRejected ? 'rejected' : 'used');
  return run(script, file);
}

/**
 * What became of a bundle's code cache: `used`; `missing` (none was written, or it cannot be read);
 * `stale` (made for another build of the bundle); `rejected` (V8's own check failed: another Node, other
 * flags, a damaged file).
 */
export type CodeCacheState = 'used' | 'missing' | 'stale' | 'rejected';

/**
 * Writes `<bundle>.code-cache` for each bundle: compiles it and runs its top level (the bundles have
 * no import side effects), so V8 keeps the functions that run at load, then saves what V8 compiled.
 * Run by the build in a fresh `node`, whose flags are those `ux` starts with.
 */
export function writeCodeCaches(files: readonly string[]): void {
  for (const file of files) {
    const { source, identity } = readBundle(file);
    const script = compile(file, source, undefined);
    run(script, file);
    const header = Buffer.from(`${CACHE_MAGIC} ${identity}\n`, 'latin1');
    const temporary = join(dirname(file), `.${basename(file)}.code-cache.${process.pid}`);
    writeFileSync(temporary, Buffer.concat([header, script.createCachedData()]), { mode: 0o644 });
    renameSync(temporary, `${file}${CODE_CACHE_SUFFIX}`);
  }
}

export const CODE_CACHE_SUFFIX = '.code-cache';
const CACHE_MAGIC = 'ux-code-cache-2';

// Node's CommonJS wrapper: the bundle sees the same five names it would under `require`. Build and
// load must compile the very same text, or V8 rejects the cache.
const WRAPPER_HEAD = '(function (exports, require, module, __filename, __dirname) { ';
const WRAPPER_TAIL = '\n});';

function compile(file: string, source: string, cachedData: Buffer | undefined): Script {
  // No `importModuleDynamically`: the bundles carry no `import()` (tsup.config.ts makes it `require`),
  // which Node 20 cannot run from a vm.Script without an experimental flag.
  return new Script(WRAPPER_HEAD + source + WRAPPER_TAIL, {
    filename: file,
    ...(cachedData ? { cachedData } : {}),
  });
}

function run(script: Script, file: string): unknown {
  const module = { exports: {} as unknown, filename: file, id: file, loaded: false };
  const wrapper = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: unknown,
    filename: string,
    dirname: string,
  ) => void;
  wrapper.call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
  module.loaded = true;
  return module.exports;
}

function cachedDataFor(
  file: string,
  identity: string,
): { data: Buffer; state?: undefined } | { data?: undefined; state: 'missing' | 'stale' } {
  let data: Buffer;
  try {
    data = readFileSync(`${file}${CODE_CACHE_SUFFIX}`);
  } catch {
    return { state: 'missing' };
  }
  const end = data.indexOf(10);
  if (end < 0 || data.toString('latin1', 0, end) !== `${CACHE_MAGIC} ${identity}`) return { state: 'stale' };
  return { data: data.subarray(end + 1) };
}

/** The bundle's text (UTF-8, as `require` reads it) and the hash of its bytes. */
function readBundle(file: string): { source: string; identity: string } {
  const bytes = readFileSync(file);
  return { source: bytes.toString('utf8'), identity: createHash('sha256').update(bytes).digest('hex') };
}
