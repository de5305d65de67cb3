import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseRequirements, parseTomlDocument, parseUserConfig } from '@ux/config';
import { ConfigError } from '@ux/protocol/core';
import { tempDir } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { SHIPPED_SANDBOX_PLUGINS } from './sandbox-backends.js';
import { loadSandboxPlugins, type SandboxPluginsInput } from './sandbox-plugins.js';

// The loader with plugin modules written to temporary directories (loaded with require: no process).

const PLUGIN = (body: string) => `module.exports.sandboxPlugin = {
  specificationVersion: 'ux-sandbox-v1',
  id: 'acme',
  platforms: ['linux'],
  create: () => { throw new Error('not created in these tests'); },
  ${body}
};
`;

interface Layout {
  dir: string;
  config: string;
  requirements: string;
  installation: string;
}

function layout(): Layout {
  const dir = realpathSync(tempDir('ux-plugins-'));
  mkdirSync(join(dir, 'home'));
  mkdirSync(join(dir, 'etc'));
  mkdirSync(join(dir, 'install', 'dist'), { recursive: true });
  writeFileSync(join(dir, 'install', 'package.json'), '{"name":"@ux/cli"}');
  return {
    dir,
    config: join(dir, 'home', 'config.toml'),
    requirements: join(dir, 'etc', 'requirements.toml'),
    installation: join(dir, 'install', 'dist', 'exec-command.cjs'),
  };
}

function write(path: string, text: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return path;
}

function load(
  files: Layout,
  config: string,
  requirements?: string,
  extra: Partial<SandboxPluginsInput> = {},
) {
  return loadSandboxPlugins({
    user: parseUserConfig(parseTomlDocument(config, files.config)),
    ...(requirements === undefined
      ? {}
      : { requirements: parseRequirements(parseTomlDocument(requirements, files.requirements)) }),
    shipped: SHIPPED_SANDBOX_PLUGINS,
    platform: 'linux',
    homeDir: join(files.dir, 'home'),
    cwd: files.dir,
    installationFile: files.installation,
    ...extra,
  });
}

function errorOf(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    if (ConfigError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('no error');
}

describe('loadSandboxPlugins', () => {
  it('loads the shipped backends through the same checks, listing those of other platforms', () => {
    const files = layout();
    const loaded = load(files, '');
    expect(loaded.plugins.map((p) => [p.id, p.origin, p.onThisPlatform, p.source])).toEqual([
      ['bwrap', 'shipped', true, 'shipped with ux (@ux/sandbox-bwrap)'],
      ['seatbelt', 'shipped', false, 'shipped with ux (@ux/sandbox-seatbelt)'],
      ['windows-token', 'shipped', false, 'shipped with ux (@ux/sandbox-windows-token)'],
    ]);
    expect(loaded.warnings).toEqual([]);
  });

  it('checks [sandbox.bwrap] with the bwrap plugin schema, at the line of the key', () => {
    const files = layout();
    expect(load(files, '[sandbox.bwrap]\npath = "/opt/bwrap"\n').plugins[0]?.settings).toEqual({
      path: '/opt/bwrap',
    });
    expect(errorOf(() => load(files, '[sandbox.bwrap]\n\npath = "bwrap"\n')).message).toBe(
      `${files.config}:3:1: [sandbox.bwrap] path: path must be the absolute path of the bwrap binary, got "bwrap"`,
    );
    expect(errorOf(() => load(files, '[sandbox.seatbelt]\nprofile = "x"\n')).message).toBe(
      `${files.config}:2:1: [sandbox.seatbelt] profile: the seatbelt backend takes no settings`,
    );
  });

  it('resolves a package beside the naming file, an ES-module-only one through its import condition', () => {
    const files = layout();
    const root = join(dirname(files.config), 'node_modules', '@acme', 'x');
    write(
      join(root, 'package.json'),
      JSON.stringify({ name: '@acme/x', type: 'module', exports: { '.': { import: './plugin.js' } } }),
    );
    write(
      join(root, 'plugin.js'),
      "export default { specificationVersion: 'ux-sandbox-v1', id: 'acme', platforms: ['linux'], create() {} };\n",
    );
    const loaded = load(files, 'sandbox_plugins = ["@acme/x"]\n');
    const acme = loaded.plugins.at(-1)!;
    expect([acme.id, acme.origin, acme.file, acme.packageRoot]).toEqual([
      'acme',
      'config',
      join(root, 'plugin.js'),
      root,
    ]);
    expect(acme.source).toBe(
      `sandbox_plugins "@acme/x" at ${files.config}:1:20 (${join(root, 'plugin.js')})`,
    );
  });

  it('never looks for a package in the directories above the naming file, nor in the working directory', () => {
    const files = layout();
    // Planted where a sandboxed command might write: above $UX_HOME, and in the working directory.
    write(join(files.dir, 'node_modules', 'acme', 'index.js'), PLUGIN(''));
    write(join(files.dir, 'node_modules', 'acme', 'package.json'), '{"name":"acme"}');
    expect(errorOf(() => load(files, 'sandbox_plugins = ["acme"]\n')).message).toContain(
      `${files.config}:1:20: sandbox plugin "acme": no such package in ${join(dirname(files.config), 'node_modules')}, ${join(files.dir, 'install', 'node_modules')} (beside the file that names it, then the ux installation)`,
    );
    // -c: a package name is looked up beside config.toml, not in the working directory.
    const overridden = parseUserConfig(parseTomlDocument('', files.config));
    overridden.sandboxPlugins = {
      values: [{ value: 'acme', location: { file: '-c sandbox_plugins=["acme"]' } }],
      location: { file: '-c sandbox_plugins=["acme"]' },
    };
    expect(
      errorOf(() =>
        loadSandboxPlugins({
          user: overridden,
          shipped: SHIPPED_SANDBOX_PLUGINS,
          platform: 'linux',
          homeDir: files.dir,
          cwd: files.dir,
          installationFile: files.installation,
        }),
      ).message,
    ).toContain('sandbox plugin "acme": no such package in');
  });

  it('finds a package where the ux installation finds its dependencies', () => {
    const files = layout();
    write(join(files.dir, 'install', 'node_modules', 'acme', 'index.js'), PLUGIN(''));
    write(join(files.dir, 'install', 'node_modules', 'acme', 'package.json'), '{"name":"acme"}');
    expect(load(files, 'sandbox_plugins = ["acme"]\n').plugins.at(-1)?.id).toBe('acme');
  });

  it.each([
    ['module.exports = 42;\n', 'it exports no sandbox plugin object (default export or `sandboxPlugin`)'],
    [
      PLUGIN("specificationVersion: 'ux-sandbox-v2',"),
      'it speaks "ux-sandbox-v2", ux speaks "ux-sandbox-v1"',
    ],
    [PLUGIN("id: 'Acme',"), 'its id "Acme" is not a lowercase name ([a-z][a-z0-9-]*)'],
    [
      PLUGIN("platforms: ['linux', 'plan9'],"),
      'its platforms ["linux","plan9"] include names that are not process.platform values (plan9); known: aix, android, darwin, freebsd, haiku, linux, openbsd, sunos, win32, cygwin, netbsd',
    ],
    [PLUGIN('create: undefined,'), 'it has no create(settings, host) function'],
    [PLUGIN('settings: {},'), 'its settings schema is not a Standard Schema (no ~standard.validate)'],
    ['throw new Error("boom at load");\n', 'loading it failed: boom at load'],
  ])('refuses %j at the line that named it', (source, problem) => {
    const files = layout();
    const file = write(join(dirname(files.config), 'plugins', 'acme.cjs'), source);
    expect(errorOf(() => load(files, '\nsandbox_plugins = ["./plugins/acme.cjs"]\n')).message).toBe(
      `${files.config}:2:20: sandbox plugin "./plugins/acme.cjs" (${file}) cannot be used: ${problem}`,
    );
  });

  it('takes a CommonJS module.exports that is the plugin itself', () => {
    const files = layout();
    write(
      join(dirname(files.config), 'cjs.cjs'),
      "module.exports = { specificationVersion: 'ux-sandbox-v1', id: 'acme', platforms: ['linux'], create() {} };\n",
    );
    expect(load(files, 'sandbox_plugins = ["./cjs.cjs"]\n').plugins.at(-1)?.id).toBe('acme');
  });

  it('refuses an id another plugin has, naming both', () => {
    const files = layout();
    write(join(dirname(files.config), 'a.cjs'), PLUGIN(''));
    const b = write(join(dirname(files.config), 'b.cjs'), PLUGIN(''));
    expect(errorOf(() => load(files, 'sandbox_plugins = ["./a.cjs", "./b.cjs"]\n')).message).toBe(
      `${files.config}:1:31: sandbox plugin "./b.cjs" (${b}) has the id "acme", which sandbox_plugins "./a.cjs" at ${files.config}:1:20 (${join(dirname(files.config), 'a.cjs')}) already has; a backend id names one backend (remove one of them from sandbox_plugins)`,
    );
  });

  it('warns about a plugin for another platform, and lists it', () => {
    const files = layout();
    write(join(dirname(files.config), 'mac.cjs'), PLUGIN("platforms: ['darwin'],"));
    const loaded = load(files, 'sandbox_plugins = ["./mac.cjs"]\n');
    expect(loaded.plugins.at(-1)?.onThisPlatform).toBe(false);
    expect(loaded.warnings).toEqual([
      `${files.config}:1:20: sandbox plugin "./mac.cjs" (${join(dirname(files.config), 'mac.cjs')}) (backend "acme") runs on darwin, not linux: it is listed but never used here`,
    ]);
  });

  it('hands an asynchronous schema result on as a promise, rejecting with the issue at its line', async () => {
    const files = layout();
    write(
      join(dirname(files.config), 'async.cjs'),
      PLUGIN(`settings: { '~standard': { version: 1, vendor: 't', validate: async (v) =>
        typeof v.level === 'number' ? { value: v } : { issues: [{ message: 'must be a number', path: ['level'] }] } } },`),
    );
    const good = load(files, 'sandbox_plugins = ["./async.cjs"]\n[sandbox.acme]\nlevel = 3\n');
    await expect(good.plugins.at(-1)?.settings).resolves.toEqual({ level: 3 });
    const bad = load(files, 'sandbox_plugins = ["./async.cjs"]\n[sandbox.acme]\nlevel = "high"\n');
    await expect(bad.plugins.at(-1)?.settings).rejects.toThrow(
      `${files.config}:3:1: [sandbox.acme] level: must be a number`,
    );
  });

  describe('allowed_sandbox_plugins', () => {
    it('allows what resolves to the same file, refuses anything else before loading it', () => {
      const files = layout();
      const marker = join(files.dir, 'loaded');
      const plugin = write(
        join(dirname(files.config), 'acme.cjs'),
        `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'x');\n${PLUGIN('')}`,
      );
      const config = 'sandbox_plugins = ["./acme.cjs"]\n';
      // The requirements name the same file by another path: allowed.
      expect(load(files, config, `allowed_sandbox_plugins = ["${plugin}"]\n`).plugins.at(-1)?.id).toBe(
        'acme',
      );
      for (const [requirements, shown] of [
        ['allowed_sandbox_plugins = []\n', '[] allows none'],
        ['allowed_sandbox_plugins = ["./acme.cjs"]\n', '["./acme.cjs"]'],
      ] as const) {
        // "./acme.cjs" beside the requirements file is not the user's file of that name.
        write(join(dirname(files.requirements), 'acme.cjs'), PLUGIN(''));
        expect(errorOf(() => load(files, config, requirements)).message).toBe(
          `${files.requirements}:1:1: sandbox plugin "./acme.cjs" (${plugin}) (from ${files.config}:1:20) is not allowed here: allowed_sandbox_plugins = ${shown}`,
        );
      }
    });

    it('refuses a package that shadows a vetted name', () => {
      const files = layout();
      write(join(files.dir, 'install', 'node_modules', 'acme', 'index.js'), PLUGIN(''));
      write(join(files.dir, 'install', 'node_modules', 'acme', 'package.json'), '{"name":"acme"}');
      const shadow = write(join(dirname(files.config), 'node_modules', 'acme', 'index.js'), PLUGIN(''));
      write(join(dirname(files.config), 'node_modules', 'acme', 'package.json'), '{"name":"acme"}');
      expect(
        errorOf(() => load(files, 'sandbox_plugins = ["acme"]\n', 'allowed_sandbox_plugins = ["acme"]\n'))
          .message,
      ).toBe(
        `${files.requirements}:1:1: sandbox plugin "acme" (${shadow}) (from ${files.config}:1:20) is not allowed here: allowed_sandbox_plugins = ["acme"]`,
      );
    });

    it("always loads the requirements' own plugins", () => {
      const files = layout();
      write(join(dirname(files.requirements), 'vetted.cjs'), PLUGIN(''));
      const loaded = load(files, '', 'sandbox_plugins = ["./vetted.cjs"]\nallowed_sandbox_plugins = []\n');
      expect(loaded.plugins.at(-1)?.origin).toBe('requirements');
    });
  });

  it('refuses a settings table no loaded plugin provides', () => {
    const files = layout();
    expect(errorOf(() => load(files, '[sandbox.landlok]\n')).message).toBe(
      `${files.config}:1:2: [sandbox.landlok] configures no loaded sandbox backend; loaded: bwrap, seatbelt, windows-token (add the plugin that provides "landlok" to sandbox_plugins)`,
    );
  });
});

describe('[sandbox.<id>] in the requirements', () => {
  it('pins keys over the user table; a user key with another value is refused at its line', () => {
    const files = layout();
    const pinned = '[sandbox.bwrap]\npath = "/opt/vetted/bwrap"\n';
    expect(load(files, '', pinned).plugins[0]?.settings).toEqual({ path: '/opt/vetted/bwrap' });
    expect(load(files, '[sandbox.bwrap]\npath = "/opt/vetted/bwrap"\n', pinned).plugins[0]?.settings).toEqual(
      {
        path: '/opt/vetted/bwrap',
      },
    );
    expect(errorOf(() => load(files, '\n[sandbox.bwrap]\npath = "/home/me/bwrap"\n', pinned)).message).toBe(
      `${files.config}:3:1: [sandbox.bwrap] path is pinned by the requirements (${files.requirements}:2:1: path = "/opt/vetted/bwrap"); remove it here`,
    );
    // The deprecated bwrap_path is the same key.
    expect(errorOf(() => load(files, 'bwrap_path = "/home/me/bwrap"\n', pinned)).message).toBe(
      `${files.config}:1:1: [sandbox.bwrap] path is pinned by the requirements (${files.requirements}:2:1: path = "/opt/vetted/bwrap"); remove it here`,
    );
    // A pinned key the backend's schema refuses is reported at the requirements' line.
    expect(errorOf(() => load(files, '', '[sandbox.bwrap]\npath = "bwrap"\n')).message).toBe(
      `${files.requirements}:2:1: [sandbox.bwrap] path: path must be the absolute path of the bwrap binary, got "bwrap"`,
    );
  });
});
