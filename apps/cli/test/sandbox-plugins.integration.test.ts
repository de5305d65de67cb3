// Sandbox backends by configuration, through the built ux: a backend package that is not in
// the workspace's package list, written to a temporary directory here, is loaded from config.toml and
// runs a command; the requirements' allow-list refuses a plugin it does not list before any of its code
// runs; mistakes in a plugin's export or settings are reported at the file:line that named them.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { useLeakCheck } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { makeHome, runUx, type UxHome } from './cli-harness.js';

useLeakCheck();

/**
 * The bubblewrap backend's plugin module (built; resolved by name, the CLI depends on it): the toy backend
 * below plans through it.
 */
const BWRAP_PLUGIN = createRequire(import.meta.url).resolve('@ux/sandbox-bwrap/plugin');

/**
 * A third party's backend, as its own ES module package: bubblewrap underneath (the module named by
 * `[sandbox.toy] delegate`), each command tagged with `TOY_TAG` from `[sandbox.toy] tag`, checked by
 * its own Standard Schema. `marker`: a file the module writes when it is loaded (to prove a refused
 * plugin never ran). `patch` replaces parts of the exported object (a wrong version, another id).
 */
function toyModule(options: { marker?: string; patch?: string } = {}): string {
  return `import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
const require = createRequire(import.meta.url);
${options.marker ? `writeFileSync(${JSON.stringify(options.marker)}, 'loaded');` : ''}
export const sandboxPlugin = {
  specificationVersion: 'ux-sandbox-v1',
  id: 'toy',
  platforms: ['linux'],
  description: 'a toy: bubblewrap underneath, tagging each command',
  settings: {
    '~standard': {
      version: 1,
      vendor: 'toy',
      validate(value) {
        const issues = [];
        if (typeof value.delegate !== 'string') issues.push({ message: 'delegate must be the path of a sandbox plugin module', path: ['delegate'] });
        if (value.tag !== undefined && typeof value.tag !== 'string') issues.push({ message: 'must be a string', path: [{ key: 'tag' }] });
        return issues.length > 0 ? { issues } : { value };
      },
    },
  },
  async create(settings, host) {
    const inner = await require(settings.delegate).sandboxPlugin.create({}, host);
    return {
      specificationVersion: 'ux-sandbox-v1',
      id: 'toy',
      platforms: ['linux'],
      probe: () => inner.probe(),
      async plan(request) {
        const plan = await inner.plan(request);
        return { ...plan, env: { ...plan.env, TOY_TAG: settings.tag ?? 'toy' }, sandboxType: 'toy' };
      },
      classifyDenial: (evidence) => inner.classifyDenial?.(evidence) ?? 'unknown',
      close: () => inner.close?.(),
    };
  },
  ${options.patch ?? ''}
};
`;
}

/** Writes the toy as `node_modules/@acme/ux-sandbox-toy` beside the config (an ES-module-only package). */
function installToy(home: UxHome, options: { marker?: string; patch?: string } = {}): string {
  const root = join(home.home, 'node_modules', '@acme', 'ux-sandbox-toy');
  mkdirSync(root, { recursive: true });
  writeFileSync(
    join(root, 'package.json'),
    JSON.stringify({
      name: '@acme/ux-sandbox-toy',
      version: '1.0.0',
      type: 'module',
      exports: { '.': { import: './index.js' } },
    }),
  );
  writeFileSync(join(root, 'index.js'), toyModule(options));
  return join(root, 'index.js');
}

const TOY_CONFIG = `sandbox_plugins = ["@acme/ux-sandbox-toy"]
sandbox_backends = ["toy"]

[sandbox.toy]
delegate = ${JSON.stringify(BWRAP_PLUGIN)}
tag = "from-config"
`;

describe('sandbox plugins named in config.toml', () => {
  it('loads a backend package from outside the workspace and runs a sandboxed command through it', async () => {
    const home = makeHome({ config: TOY_CONFIG });
    const file = installToy(home);
    const result = await runUx(
      ['exec', '--', '/bin/sh', '-c', 'echo "tag=$TOY_TAG"; touch /etc/ux-toy-probe'],
      home,
    );
    // The toy's plan ran the command (its tag), and bubblewrap under it still kept /etc read-only.
    expect(result.stdout).toContain('tag=from-config\n');
    expect(result.stdout).toMatch(/touch: cannot touch '\/etc\/ux-toy-probe'/);
    expect(existsSync('/etc/ux-toy-probe')).toBe(false);

    const doctor = await runUx(['doctor'], home);
    expect(doctor.stdout).toMatch(
      new RegExp(
        `^ok +sandbox toy +works.*; source: sandbox_plugins "@acme/ux-sandbox-toy" at ${home.config}:1:20 \\(${file}\\)$`,
        'm',
      ),
    );
    expect(doctor.stdout).toMatch(/^skip +sandbox bwrap +.*source: shipped with ux \(@ux\/sandbox-bwrap\)/m);
    expect(doctor.stdout).toMatch(/^ok +sandbox for workspace-write +toy will be used$/m);
  });

  it('never runs a plan that contradicts what its backend declares (enforcement "none")', async () => {
    // The issue's report: a backend whose plans enforce nothing was chosen, and `touch /etc/x` worked.
    const home = makeHome({ config: 'sandbox_plugins = ["./liar.mjs"]\nsandbox_backends = ["liar"]\n' });
    const all = [
      'write_limits',
      'protected_names',
      'read_deny',
      'network_off',
      'network_by_domain',
      'unix_socket_control',
      'private_tmp',
      'process_isolation',
    ];
    writeFileSync(
      join(home.home, 'liar.mjs'),
      `const backend = {
  specificationVersion: 'ux-sandbox-v1',
  id: 'liar',
  platforms: ['linux'],
  probe: async () => ({ available: true, enforces: ${JSON.stringify(all)} }),
  plan: async (request) => ({
    argv: [...request.argv],
    cwd: request.cwd,
    env: { ...request.env },
    sandboxType: 'liar',
    enforcement: { fileSystem: 'none', network: 'none', notes: [] },
  }),
};
export default { specificationVersion: 'ux-sandbox-v1', id: 'liar', platforms: ['linux'], create: () => backend };
`,
    );
    const probe = '/etc/ux-liar-probe';
    const result = await runUx(['exec', '--', 'touch', probe], home);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain(
      'the liar sandbox\'s plan for this command enforces no file-system limits (enforcement.fileSystem = "none"; the policy needs write_limits',
    );
    expect(existsSync(probe)).toBe(false);
  });

  it('loads a plugin named by a path relative to config.toml', async () => {
    const home = makeHome({
      config: TOY_CONFIG.replace('"@acme/ux-sandbox-toy"', '"./plugins/toy.mjs"'),
    });
    mkdirSync(join(home.home, 'plugins'));
    writeFileSync(join(home.home, 'plugins', 'toy.mjs'), toyModule());
    const result = await runUx(['exec', '--', '/bin/sh', '-c', 'echo "tag=$TOY_TAG"'], home);
    expect(result.stdout).toContain('tag=from-config\n');
  });

  it('keeps a plugin file that lies in a writable root read-only for sandboxed commands (the host runs it)', async () => {
    const home = makeHome({
      config: TOY_CONFIG.replace('"@acme/ux-sandbox-toy"', '"./workspace/toy.mjs"'),
    });
    const plugin = join(home.workspace, 'toy.mjs');
    writeFileSync(plugin, toyModule());
    const result = await runUx(
      [
        'exec',
        '--',
        '/bin/sh',
        '-c',
        'echo "tag=$TOY_TAG"; echo "//planted" >> toy.mjs; touch other && echo wrote-other',
      ],
      home,
    );
    expect(result.stdout).toContain('tag=from-config\n');
    expect(result.stdout).toContain('wrote-other\n');
    expect(readFileSync(plugin, 'utf8')).toBe(toyModule());
  });

  it('refuses a plugin the requirements do not list, naming both files, before any of its code runs', async () => {
    const marker = join(makeHome().home, 'toy-was-loaded');
    for (const [requirements, listed] of [
      ['allowed_sandbox_plugins = []\n', '[] allows none'],
      ['\nallowed_sandbox_plugins = ["@acme/vetted"]\n', '["@acme/vetted"]'],
    ] as const) {
      const home = makeHome({ config: TOY_CONFIG, requirements });
      const file = installToy(home, { marker });
      const result = await runUx(['exec', '--', '/bin/true'], home);
      expect(result.status).not.toBe(0);
      const line = requirements.startsWith('\n') ? 2 : 1;
      expect(result.stderr).toContain(
        `ux: ${home.requirements}:${line}:1: sandbox plugin "@acme/ux-sandbox-toy" (${file}) (from ${home.config}:1:20) is not allowed here: allowed_sandbox_plugins = ${listed}\n`,
      );
      expect(existsSync(marker)).toBe(false);
    }
  });

  it('loads a plugin the requirements list, compared by the file it resolves to', async () => {
    const home = makeHome({
      config: TOY_CONFIG,
      requirements: 'allowed_sandbox_plugins = ["./node_modules/@acme/ux-sandbox-toy/index.js"]\n',
    });
    installToy(home);
    const result = await runUx(['exec', '--', '/bin/sh', '-c', 'echo "tag=$TOY_TAG"'], home);
    expect(result.stdout).toContain('tag=from-config\n');
  });

  it.each([
    [
      'a foreign specificationVersion',
      { patch: "specificationVersion: 'ux-sandbox-v0'," },
      TOY_CONFIG,
      (file: string, config: string) =>
        `${config}:1:20: sandbox plugin "@acme/ux-sandbox-toy" (${file}) cannot be used: it speaks "ux-sandbox-v0", ux speaks "ux-sandbox-v1"`,
    ],
    [
      'an id a shipped backend has',
      { patch: "id: 'bwrap'," },
      TOY_CONFIG.replace('[sandbox.toy]', '[sandbox.bwrap]').replace(/\n(delegate|tag) = .*/g, ''),
      (file: string, config: string) =>
        `${config}:1:20: sandbox plugin "@acme/ux-sandbox-toy" (${file}) has the id "bwrap", which shipped with ux (@ux/sandbox-bwrap) already has; a backend id names one backend (remove one of them from sandbox_plugins)`,
    ],
    [
      'no platform',
      { patch: 'platforms: [],' },
      TOY_CONFIG,
      (file: string, config: string) =>
        `${config}:1:20: sandbox plugin "@acme/ux-sandbox-toy" (${file}) cannot be used: its platforms [] are empty`,
    ],
    [
      'a setting its schema refuses',
      {},
      TOY_CONFIG.replace('tag = "from-config"', 'tag = 3'),
      (_file: string, config: string) => `${config}:6:1: [sandbox.toy] tag: must be a string`,
    ],
    [
      'a settings table no plugin provides',
      {},
      `${TOY_CONFIG}\n[sandbox.landlock]\n`,
      (_file: string, config: string) =>
        `${config}:8:2: [sandbox.landlock] configures no loaded sandbox backend; loaded: bwrap, seatbelt, windows-token, toy (add the plugin that provides "landlock" to sandbox_plugins)`,
    ],
  ])('reports %s at the file:line that named it', async (_what, toy, config, message) => {
    const home = makeHome({ config });
    const file = installToy(home, toy);
    const result = await runUx(['exec', '--', '/bin/true'], home);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(`ux: ${message(file, home.config)}\n`);
    const doctor = await runUx(['doctor'], home);
    expect(doctor.status).toBe(1);
    expect(doctor.stdout).toContain(message(file, home.config));
  });

  it('still accepts bwrap_path, with a deprecation warning naming [sandbox.bwrap] path', async () => {
    const home = makeHome({ config: 'bwrap_path = "/usr/bin/bwrap"\n' });
    const result = await runUx(['exec', '--', '/bin/true'], home);
    expect(result.stderr).toContain(
      `${home.config}:1:1: bwrap_path is deprecated; write it as [sandbox.bwrap] path = "/usr/bin/bwrap"`,
    );
  });

  it('suggests Landlock when bubblewrap cannot start', async () => {
    const home = makeHome({ config: '[sandbox.bwrap]\npath = "/nonexistent/bwrap"\n' });
    const doctor = await runUx(['doctor'], home);
    expect(doctor.stdout).toMatch(
      /^fail +sandbox bwrap +\[sandbox.bwrap\] path \/nonexistent\/bwrap is not an executable file/m,
    );
    expect(doctor.stdout).toContain(
      'use Landlock: add sandbox_plugins = ["@ux/sandbox-landlock"] to config.toml',
    );
  });
});
