import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  isConfigOverrideLabel,
  isPluginPath,
  type Requirements,
  type SandboxSettingsTable,
  type UserConfig,
} from '@ux/config';
import {
  ConfigError,
  didYouMean,
  formatLocation,
  type SandboxPlugin,
  type SettingsValidation,
  sandboxPluginProblem,
} from '@ux/protocol/core';

/** Where a plugin named in configuration was written (a file position, or a `-c` argument). */
export interface PluginLocation {
  file: string;
  line?: number;
  column?: number;
}

/** A sandbox plugin the loader accepted: what it is, where it came from, its checked settings. */
export interface LoadedSandboxPlugin {
  plugin: SandboxPlugin<unknown>;
  id: string;
  /** `shipped`: part of ux; `requirements` / `config`: named in that file's `sandbox_plugins`. */
  origin: 'shipped' | 'requirements' | 'config';
  /** As written (`@acme/ux-sandbox-x`, `./plugins/y.mjs`). */
  specifier: string;
  /** Where it was named; undefined for a shipped one. */
  location?: PluginLocation;
  /** The module file it was loaded from (undefined for one bundled into ux). */
  file?: string;
  /** The directory of the package that holds `file` (its package.json), when there is one. */
  packageRoot?: string;
  /**
   * One line for `ux doctor`: `shipped with ux (@ux/sandbox-bwrap)`,
   * `sandbox_plugins "./y.mjs" at /home/u/.ux/config.toml:3:20 (/home/u/.ux/y.mjs)`.
   */
  source: string;
  /** Whether it runs on this platform; one that does not is listed but never created. */
  onThisPlatform: boolean;
  /**
   * The `[sandbox.<id>]` table checked by the plugin's schema; a promise when the schema answers
   * asynchronously (then a mistake is reported when the backend is first probed or asked for a plan).
   */
  settings: unknown;
  /** Where its settings table was written, for messages. */
  settingsLocation?: PluginLocation;
}

export interface SandboxPluginsInput {
  user?: UserConfig;
  requirements?: Requirements;
  /**
   * The backends ux ships, by package name, in preference order: the module each name stands for,
   * bundled into the CLI (so no file is read to list them). They go through the same checks as any
   * plugin: export, specificationVersion, id, platforms, settings.
   */
  shipped: ReadonlyArray<readonly [specifier: string, module: () => unknown]>;
  platform: NodeJS.Platform;
  homeDir: string;
  /** The working directory, the base of paths given with `-c sandbox_plugins=[…]`. */
  cwd: string;
  /** A file of the ux installation; packages not found beside the naming file are resolved from here. */
  installationFile?: string;
}

export interface LoadedSandboxPlugins {
  plugins: LoadedSandboxPlugin[];
  warnings: string[];
}

const PLATFORMS: readonly string[] = [
  'aix',
  'android',
  'darwin',
  'freebsd',
  'haiku',
  'linux',
  'openbsd',
  'sunos',
  'win32',
  'cygwin',
  'netbsd',
];

/**
 * Loads the sandbox plugins of a session: the shipped ones, then those the requirements name, then
 * those the user's config names (each in the order written). A package name is resolved from the
 * `node_modules` beside the file that names it, then from the ux installation; a path (`./`, `../`, `/`,
 * `~/`) relative to that file. A user's plugin must be one the requirements' `allowed_sandbox_plugins` allow
 * (compared by the file each resolves to) before any of its code runs. Modules are loaded with
 * `require` (Node >= 20.19 requires ES modules without top-level await): the CLI's command bundles run
 * from code compiled through node:vm, where Node 20 cannot run an `import()`. Every mistake is a
 * `ConfigError` at the file:line that named the plugin (or its settings table).
 */
export function loadSandboxPlugins(input: SandboxPluginsInput): LoadedSandboxPlugins {
  const warnings: string[] = [];
  const plugins: LoadedSandboxPlugin[] = [];
  const installation = input.installationFile ?? fileURLToPath(import.meta.url);
  const shippedNames = new Set(input.shipped.map(([name]) => name));

  const accept = (
    exported: unknown,
    entry: { specifier: string; origin: LoadedSandboxPlugin['origin']; location?: PluginLocation },
    file: string | undefined,
  ) => {
    const where = entry.location ?? { file: 'ux' };
    const named = describeEntry(entry.specifier, file);
    const problem = sandboxPluginProblem(exported);
    if (problem) throw configError(where, `sandbox plugin ${named} cannot be used: ${problem}`);
    const plugin = exported as SandboxPlugin<unknown>;
    const unknownPlatforms = plugin.platforms.filter((p) => !PLATFORMS.includes(p));
    if (plugin.platforms.length === 0 || unknownPlatforms.length > 0)
      throw configError(
        where,
        `sandbox plugin ${named} cannot be used: its platforms ${JSON.stringify(plugin.platforms)} ${
          plugin.platforms.length === 0
            ? 'are empty'
            : `include names that are not process.platform values (${unknownPlatforms.join(', ')}); known: ${PLATFORMS.join(', ')}`
        }`,
      );
    const clash = plugins.find((other) => other.id === plugin.id);
    if (clash)
      throw configError(
        where,
        `sandbox plugin ${named} has the id "${plugin.id}", which ${clash.source} already has; a backend id names one backend (remove one of them from sandbox_plugins)`,
      );
    const onThisPlatform = plugin.platforms.includes(input.platform);
    const source =
      entry.origin === 'shipped'
        ? `shipped with ux (${entry.specifier})`
        : `sandbox_plugins ${JSON.stringify(entry.specifier)} at ${formatLocation(where)}${file ? ` (${file})` : ''}`;
    if (!onThisPlatform && entry.origin !== 'shipped')
      warnings.push(
        `${formatLocation(where)}: sandbox plugin ${named} (backend "${plugin.id}") runs on ${plugin.platforms.join(', ')}, not ${input.platform}: it is listed but never used here`,
      );
    const table = settingsTable(
      plugin.id,
      input.user?.sandbox[plugin.id],
      input.requirements?.sandbox[plugin.id],
    );
    plugins.push({
      plugin,
      id: plugin.id,
      origin: entry.origin,
      specifier: entry.specifier,
      ...(entry.location ? { location: entry.location } : {}),
      // A path names one file; a package, its directory (all of which the host runs).
      ...(file ? { file, ...(isPluginPath(entry.specifier) ? {} : packageRootOf(file)) } : {}),
      source,
      onThisPlatform,
      settings: checkSettings(plugin, table),
      ...(table ? { settingsLocation: table.location } : {}),
    });
  };

  for (const [specifier, module] of input.shipped)
    accept(exportedPlugin(module()), { specifier, origin: 'shipped' }, undefined);

  const allowed = input.requirements?.allowedSandboxPlugins;
  const allowedFiles = allowed?.values.map((entry) => ({
    entry,
    file: tryResolve(entry.value, entry.location, input, installation),
  }));
  const entries = [
    ...(input.requirements?.sandboxPlugins?.values ?? []).map((entry) => ({
      ...entry,
      origin: 'requirements' as const,
    })),
    ...(input.user?.sandboxPlugins?.values ?? []).map((entry) => ({ ...entry, origin: 'config' as const })),
  ];
  for (const entry of entries) {
    const location = entry.location;
    // A shipped backend is part of ux: naming it again changes nothing.
    if (shippedNames.has(entry.value)) continue;
    const resolved = resolvePlugin(entry.value, location, input, installation);
    if (entry.origin === 'config' && allowed && allowedFiles) {
      if (!allowedFiles.some((candidate) => candidate.file === resolved)) {
        const list = allowed.values.map((v) => JSON.stringify(v.value)).join(', ');
        throw new ConfigError({
          ...allowed.location,
          reason: `sandbox plugin ${describeEntry(entry.value, resolved)} (from ${formatLocation(location)}) is not allowed here: allowed_sandbox_plugins = [${list}]${
            allowed.values.length === 0 ? ' allows none' : ''
          }`,
        });
      }
    }
    let module: unknown;
    try {
      module = createRequire(resolved)(resolved);
    } catch (error) {
      const code = (error as { code?: string }).code;
      const why =
        code === 'ERR_REQUIRE_ASYNC_MODULE'
          ? 'it uses top-level await, which ux cannot load (plugins are loaded with require(); move the await into create())'
          : code === 'ERR_REQUIRE_ESM'
            ? 'this Node cannot require ES modules (ux needs Node >= 20.19)'
            : `loading it failed: ${(error as Error).message?.split('\n')[0]}`;
      throw configError(
        location,
        `sandbox plugin ${describeEntry(entry.value, resolved)} cannot be used: ${why}`,
        error,
      );
    }
    accept(exportedPlugin(module), { specifier: entry.value, origin: entry.origin, location }, resolved);
  }

  // A settings table for a backend nobody loaded is a mistake (a misspelled id, a plugin left out).
  const ids = plugins.map((p) => p.id);
  for (const [id, table] of [
    ...Object.entries(input.requirements?.sandbox ?? {}),
    ...Object.entries(input.user?.sandbox ?? {}),
  ]) {
    if (ids.includes(id)) continue;
    throw configError(
      table.location,
      `[sandbox.${id}] configures no loaded sandbox backend${didYouMean(id, ids)}; loaded: ${ids.join(', ')} (add the plugin that provides "${id}" to sandbox_plugins)`,
    );
  }
  return { plugins, warnings };
}

/**
 * The plugin a module exports: `sandboxPlugin`, else its default export (for CommonJS, `module.exports`
 * itself when it is the plugin).
 */
function exportedPlugin(module: unknown): unknown {
  if (typeof module !== 'object' || module === null) return module;
  const record = module as { sandboxPlugin?: unknown; default?: unknown; specificationVersion?: unknown };
  if (record.sandboxPlugin !== undefined) return record.sandboxPlugin;
  if (record.default === undefined && record.specificationVersion !== undefined) return record;
  const fallback = record.default;
  // A CommonJS module compiled from ESM (`exports.default`) or a module whose default is the namespace.
  if (typeof fallback === 'object' && fallback !== null && 'sandboxPlugin' in fallback)
    return (fallback as { sandboxPlugin: unknown }).sandboxPlugin;
  return fallback;
}

/**
 * A backend's `[sandbox.<id>]`: the user's table with the requirements' keys over it. A user key that
 * gives a pinned key another value is an error at the user's line, naming the requirements' line.
 */
function settingsTable(
  id: string,
  user: SandboxSettingsTable | undefined,
  pinned: SandboxSettingsTable | undefined,
): SandboxSettingsTable | undefined {
  if (!pinned || !user) return pinned ?? user;
  for (const [key, value] of Object.entries(user.value)) {
    if (!(key in pinned.value) || JSON.stringify(value) === JSON.stringify(pinned.value[key])) continue;
    throw configError(
      user.locate([key]),
      `[sandbox.${id}] ${key} is pinned by the requirements (${formatLocation(pinned.locate([key]))}: ${key} = ${JSON.stringify(pinned.value[key])}); remove it here`,
    );
  }
  return {
    value: { ...user.value, ...pinned.value },
    location: user.location,
    locate: (path) => (typeof path[0] === 'string' && path[0] in pinned.value ? pinned : user).locate(path),
  };
}

/** Checks `[sandbox.<id>]` with the plugin's schema (an absent table is an empty one). */
function checkSettings(plugin: SandboxPlugin<unknown>, table: SandboxSettingsTable | undefined): unknown {
  const value = table?.value ?? {};
  if (!plugin.settings) {
    const keys = Object.keys(value);
    if (table && keys.length > 0)
      throw configError(
        table.locate([keys[0]!]),
        `[sandbox.${plugin.id}] ${keys[0]}: the ${plugin.id} backend takes no settings`,
      );
    return {};
  }
  let result: SettingsValidation<unknown> | Promise<SettingsValidation<unknown>>;
  try {
    result = plugin.settings['~standard'].validate(value);
  } catch (error) {
    throw configError(
      table?.location ?? { file: 'ux' },
      `[sandbox.${plugin.id}]: the ${plugin.id} backend's settings schema failed: ${(error as Error).message}`,
      error,
    );
  }
  if (result instanceof Promise) return result.then((settled) => settingsValue(plugin.id, settled, table));
  return settingsValue(plugin.id, result, table);
}

function settingsValue(
  id: string,
  result: SettingsValidation<unknown>,
  table: SandboxSettingsTable | undefined,
): unknown {
  if (!result.issues) return result.value;
  const [first] = result.issues;
  const path = (first?.path ?? []).map((part) =>
    typeof part === 'object' && part !== null ? (part as { key: PropertyKey }).key : part,
  );
  const keys = path.map((part) => (typeof part === 'number' ? part : String(part)));
  const location = table ? table.locate(keys) : { file: 'config.toml' };
  const more = result.issues.length > 1 ? ` (and ${result.issues.length - 1} more)` : '';
  throw configError(
    location,
    `[sandbox.${id}]${keys.length > 0 ? ` ${keys.join('.')}` : ''}: ${first?.message ?? 'invalid settings'}${more}`,
  );
}

function configError(where: PluginLocation, reason: string, cause?: unknown): ConfigError {
  return new ConfigError({ ...where, reason }, cause === undefined ? undefined : { cause });
}

function describeEntry(specifier: string, file: string | undefined): string {
  return file && file !== specifier ? `"${specifier}" (${file})` : `"${specifier}"`;
}

/**
 * The directory a `sandbox_plugins` entry is resolved from: the naming file's. A `-c` argument has no
 * file: its paths are relative to the working directory (the person typed them there), its package
 * names are looked up beside the user's config.toml (never in the working directory, which sandboxed
 * commands may write).
 */
function baseDirectory(
  specifier: string,
  location: PluginLocation,
  input: SandboxPluginsInput,
): string | undefined {
  if (!isConfigOverrideLabel(location.file) && isAbsolute(location.file)) return dirname(location.file);
  if (isPluginPath(specifier)) return input.cwd;
  return input.user ? dirname(input.user.file) : undefined;
}

function tryResolve(
  specifier: string,
  location: PluginLocation,
  input: SandboxPluginsInput,
  installation: string,
): string | undefined {
  try {
    return resolvePlugin(specifier, location, input, installation);
  } catch {
    return undefined;
  }
}

/**
 * The real path of the module a `sandbox_plugins` entry names, or a `ConfigError` at its location. A
 * package is looked up in `node_modules` beside the naming file only (not in the directories above it,
 * nor Node's global folders such as ~/.node_modules: any of those may lie in a writable root, where a
 * sandboxed command could plant a package of that name), then as the ux installation finds its own
 * dependencies.
 */
function resolvePlugin(
  specifier: string,
  location: PluginLocation,
  input: SandboxPluginsInput,
  installation: string,
): string {
  const base = baseDirectory(specifier, location, input);
  if (isPluginPath(specifier)) {
    const path = specifier.startsWith('~/')
      ? join(input.homeDir, specifier.slice(2))
      : resolve(base ?? input.cwd, specifier);
    if (!existsSync(path) || !statSync(path).isFile())
      throw configError(location, `sandbox plugin "${specifier}": no file ${path}`);
    return realpathSync(path);
  }
  const parts = specifier.split('/');
  const nameLength = specifier.startsWith('@') ? 2 : 1;
  const name = parts.slice(0, nameLength).join('/');
  const subpath = ['.', ...parts.slice(nameLength)].join('/');
  const places = [...(base ? [join(base, 'node_modules')] : []), ...installationPlaces(installation)];
  for (const place of places) {
    const root = join(place, name);
    if (!existsSync(join(root, 'package.json'))) continue;
    const entry = packageEntry(root, subpath);
    if (!entry)
      throw configError(
        location,
        `sandbox plugin "${specifier}": the package at ${root} exports no ${subpath === '.' ? 'main module' : subpath} for Node (exports "node", "require", "import" or "default", or main)`,
      );
    return realpathSync(entry);
  }
  throw configError(
    location,
    `sandbox plugin "${specifier}": no such package in ${places.join(', ')} (beside ${base ? 'the file that names it' : 'config.toml'}, then the ux installation); install it in one of them (npm install ${name}) or name its file (./path/to/plugin.mjs)`,
  );
}

/**
 * Where the ux installation's own dependencies are: the CLI package's `node_modules`, and, when ux is
 * installed as a package, the `node_modules` directory that holds it (its siblings). Not the
 * directories above those (a home directory's `node_modules`, say), where Node would look for a
 * package missing from both.
 */
function installationPlaces(installation: string): string[] {
  let root = dirname(installation);
  while (!existsSync(join(root, 'package.json')) && dirname(root) !== root) root = dirname(root);
  const places = [join(root, 'node_modules')];
  for (let dir = dirname(root); dirname(dir) !== dir; dir = dirname(dir)) {
    if (basename(dir) !== 'node_modules') continue;
    places.push(dir);
    break;
  }
  return places;
}

/** The module file of `subpath` in the package at `root`: its `exports` (Node's conditions), else `main`. */
function packageEntry(root: string, subpath: string): string | undefined {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    exports?: unknown;
    main?: unknown;
  };
  let target: string | undefined;
  const { exports } = manifest;
  if (exports !== undefined && exports !== null) {
    const bySubpath =
      typeof exports === 'object' &&
      !Array.isArray(exports) &&
      Object.keys(exports).some((key) => key.startsWith('.'));
    target = exportTarget(
      bySubpath ? (exports as Record<string, unknown>)[subpath] : subpath === '.' ? exports : undefined,
    );
  } else {
    target = subpath === '.' ? (typeof manifest.main === 'string' ? manifest.main : 'index.js') : subpath;
  }
  if (!target) return undefined;
  const file = resolve(root, target);
  for (const candidate of [file, `${file}.js`, join(file, 'index.js')]) {
    if (!existsSync(candidate) || !statSync(candidate).isFile()) continue;
    // A package's module lies inside the package.
    if (!realpathSync(candidate).startsWith(realpathSync(root) + sep)) return undefined;
    return candidate;
  }
  return undefined;
}

function exportTarget(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  for (const condition of ['node', 'require', 'import', 'default']) {
    const target = exportTarget((value as Record<string, unknown>)[condition]);
    if (target) return target;
  }
  return undefined;
}

/** The directory of the nearest package.json above a module file (inside node_modules). */
function packageRootOf(file: string): { packageRoot?: string } {
  for (let dir = dirname(file); dirname(dir) !== dir; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return { packageRoot: dir };
    if (dir.endsWith('/node_modules')) break;
  }
  return {};
}
