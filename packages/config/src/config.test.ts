import { ConfigError } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { applyConfigOverrides } from './apply-config-overrides.js';
import { parseConfigOverride } from './parse-config-override.js';
import { checkRequirements, parseRequirements } from './requirements.js';
import { parseTomlDocument } from './toml-document.js';
import { parseUserConfig } from './user-config.js';

const FILE = '/home/dev/.ux/config.toml';
const REQ = '/etc/ux/requirements.toml';

function userConfig(text: string) {
  return parseUserConfig(parseTomlDocument(text, FILE));
}
function requirements(text: string) {
  return parseRequirements(parseTomlDocument(text, REQ));
}
function errorOf(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    if (ConfigError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('TOML documents', () => {
  it('reports malformed TOML with file:line:column', () => {
    const error = errorOf(() => parseTomlDocument('[features]\nunified_exec = \n', FILE));
    expect(error.message).toBe(`${FILE}:3:1: invalid TOML: unspecified values are invalid`);
    expect(error).toMatchObject({ file: FILE, line: 3, column: 1 });
    expect(errorOf(() => parseTomlDocument('a = 1\na = 2\n', FILE)).message).toBe(
      `${FILE}:2:1: invalid TOML: defining a key multiple times is invalid`,
    );
  });

  it('locates keys in tables, dotted keys, inline tables and arrays', () => {
    const document = parseTomlDocument(
      'profile = "x"\n[features]\nunified_exec = true\n\n[profiles.work]\nfeatures = { shell_zsh_fork = true }\nlist = ["a",\n  "b"]\n',
      FILE,
    );
    expect(document.locate(['profile'])).toEqual({ file: FILE, line: 1, column: 1 });
    expect(document.locate(['features', 'unified_exec'])).toEqual({ file: FILE, line: 3, column: 1 });
    expect(document.locate(['profiles', 'work'])).toEqual({ file: FILE, line: 5, column: 2 });
    // A table header locates its parents too.
    expect(document.locate(['profiles'])).toEqual({ file: FILE, line: 5, column: 2 });
    expect(document.locate(['profiles', 'work', 'features', 'shell_zsh_fork'])).toEqual({
      file: FILE,
      line: 6,
      column: 14,
    });
    expect(document.locate(['profiles', 'work', 'list', 1])).toEqual({ file: FILE, line: 8, column: 3 });
    expect(document.locate(['profiles', 'work', 'nothing'])).toEqual({ file: FILE, line: 5, column: 2 });
  });
});

describe('user config', () => {
  it('reads early_exit_window_ms, and leaves it out when absent', () => {
    expect(userConfig('early_exit_window_ms = 2000\n').earlyExitWindowMs).toBe(2000);
    expect(userConfig('early_exit_window_ms = 0\n').earlyExitWindowMs).toBe(0);
    expect(userConfig('allow_login_shell = true\n')).not.toHaveProperty('earlyExitWindowMs');
  });

  it('reads features, profiles, the default profile, login shells and zsh-fork paths', () => {
    const config = userConfig(`profile = "work"
allow_login_shell = false

[features]
unified_exec = false

[profiles.work.features]
unified_exec = true
shell_zsh_fork = true

[zsh_fork]
zsh_path = "/opt/zsh/bin/zsh"
execve_wrapper_path = "/opt/zsh/libexec/wrapper"
`);
    expect(config.features.assignments).toEqual([
      {
        key: 'unified_exec',
        enabled: false,
        layer: 'user',
        location: { file: FILE, line: 5, column: 1 },
        profile: undefined,
      },
    ]);
    expect(config.profile).toEqual({ name: 'work', location: { file: FILE, line: 1, column: 1 } });
    expect(
      config.profiles.work?.features.assignments.map((a) => [a.key, a.enabled, a.layer, a.profile]),
    ).toEqual([
      ['unified_exec', true, 'profile', 'work'],
      ['shell_zsh_fork', true, 'profile', 'work'],
    ]);
    expect(config.allowLoginShell).toBe(false);
    expect(config.zshFork).toEqual({
      zshPath: '/opt/zsh/bin/zsh',
      execveWrapperPath: '/opt/zsh/libexec/wrapper',
    });
    expect(config.warnings).toEqual([]);
  });

  it('reads the deprecated bwrap_path as [sandbox.bwrap] path, with a warning naming where it was written', () => {
    const config = userConfig('\nbwrap_path = "/opt/bwrap/bin/bwrap"\n');
    expect(config.sandbox.bwrap?.value).toEqual({ path: '/opt/bwrap/bin/bwrap' });
    expect(config.sandbox.bwrap?.locate(['path'])).toEqual({ file: FILE, line: 2, column: 1 });
    expect(config.warnings).toEqual([
      `${FILE}:2:1: bwrap_path is deprecated; write it as [sandbox.bwrap] path = "/opt/bwrap/bin/bwrap"`,
    ]);
  });

  it('reads sandbox_plugins and [sandbox.<id>] tables with where each was written', () => {
    const config = userConfig(
      'sandbox_plugins = ["@acme/ux-sandbox-x",\n  "./plugins/y.mjs"]\n\n[sandbox.x]\nlevel = 3\nnested = { a = 1 }\n',
    );
    expect(config.sandboxPlugins?.values).toEqual([
      { value: '@acme/ux-sandbox-x', location: { file: FILE, line: 1, column: 20 } },
      { value: './plugins/y.mjs', location: { file: FILE, line: 2, column: 3 } },
    ]);
    expect(config.sandbox.x?.value).toEqual({ level: 3, nested: { a: 1 } });
    expect(config.sandbox.x?.location).toEqual({ file: FILE, line: 4, column: 2 });
    expect(config.sandbox.x?.locate(['level'])).toEqual({ file: FILE, line: 5, column: 1 });
    expect(config.sandbox.x?.locate(['nested', 'a'])).toEqual({ file: FILE, line: 6, column: 12 });
    expect(config.warnings).toEqual([]);
  });

  it('accepts an empty file', () => {
    expect(userConfig('').features.assignments).toEqual([]);
  });

  it.each([
    [
      '[features]\nunifed_exec = true\n',
      `${FILE}:2:1: unknown feature "unifed_exec" (did you mean "unified_exec"?)`,
    ],
    [
      '[features]\nzzz = true\n',
      `${FILE}:2:1: unknown feature "zzz" (known features: shell_tool, unified_exec, shell_zsh_fork, unified_exec_zsh_fork, exec_permission_approvals, shell_snapshot, streamable_shell)`,
    ],
    [
      '[features]\nunified_exec = "yes"\n',
      `${FILE}:2:1: features.unified_exec must be true or false, got "yes"`,
    ],
    ['features = true\n', `${FILE}:1:1: features must be a table of feature = true/false`],
    ['featurs = {}\n', `${FILE}:1:1: unknown key featurs (did you mean "features"?)`],
    [
      'colour = "red"\n',
      `${FILE}:1:1: unknown key colour; known keys here: profile, allow_login_shell, early_exit_window_ms, features, profiles, zsh_fork, bwrap_path, sandbox_plugins, sandbox, environments, hooks, auto_review, approvals_reviewer, approvals_via, approval_timeout_s, approval_policy, sandbox_mode, sandbox_workspace_write, sandbox_read_only, shell_environment_policy, rules, sandbox_backends, deny_read, default_environment`,
    ],
    [
      'profile = "home"\n[profiles.work]\n',
      `${FILE}:1:1: profile "home" is not defined; defined profiles: work`,
    ],
    [
      'profile = "wrk"\n[profiles.work]\n',
      `${FILE}:1:1: profile "wrk" is not defined (did you mean "work"?); defined profiles: work`,
    ],
    ['profile = 3\n', `${FILE}:1:1: profile must be a string, got 3`],
    [
      '[profiles.work]\nfeature = {}\n',
      `${FILE}:2:1: unknown key profiles.work.feature (did you mean "features"?)`,
    ],
    [
      '[profiles.work.features]\nshell_tool = 1\n',
      `${FILE}:2:1: profiles.work.features.shell_tool must be true or false, got 1`,
    ],
    ['allow_login_shell = "no"\n', `${FILE}:1:1: allow_login_shell must be true or false, got "no"`],
    [
      'early_exit_window_ms = 60001\n',
      `${FILE}:1:1: early_exit_window_ms must be a whole number of milliseconds from 0 to 60000, got 60001`,
    ],
    [
      'early_exit_window_ms = 1.5\n',
      `${FILE}:1:1: early_exit_window_ms must be a whole number of milliseconds from 0 to 60000, got 1.5`,
    ],
    ['[zsh_fork]\nzsh_path = "zsh"\n', `${FILE}:2:1: zsh_fork.zsh_path must be an absolute path, got "zsh"`],
    ['[zsh_fork]\nzsh = "/bin/zsh"\n', `${FILE}:2:1: unknown key zsh_fork.zsh (did you mean "zsh_path"?)`],
    [
      '\nbwrap_path = "bwrap"\n',
      `${FILE}:2:1: bwrap_path must be the absolute path of the bwrap binary, got "bwrap"`,
    ],
    ['bwrap = "/usr/bin/bwrap"\n', `${FILE}:1:1: unknown key bwrap (did you mean "bwrap_path"?)`],
    [
      'bwrap_path = "/a/bwrap"\n[sandbox.bwrap]\npath = "/b/bwrap"\n',
      `${FILE}:1:1: bwrap_path and [sandbox.bwrap] path (${FILE}:3:1) both name bwrap; keep only [sandbox.bwrap] path`,
    ],
    [
      'sandbox_plugins = "x"\n',
      `${FILE}:1:1: sandbox_plugins must be an array of package names or paths, got "x"`,
    ],
    ['sandbox_plugins = [1]\n', `${FILE}:1:20: sandbox_plugins[0] must be a string, got 1`],
    [
      'sandbox_plugins = ["plugins/x.mjs "]\n',
      `${FILE}:1:20: sandbox_plugins[0]: "plugins/x.mjs " is empty or has surrounding spaces`,
    ],
    [
      'sandbox_plugins = ["Bad Name"]\n',
      `${FILE}:1:20: sandbox_plugins[0]: "Bad Name" is neither a package name (@scope/name, name, name/subpath) nor a path (./file.mjs, ../file.mjs, /abs/file.mjs, ~/file.mjs)`,
    ],
    ['sandbox_plugins = ["a", "a"]\n', `${FILE}:1:25: sandbox_plugins names "a" twice`],
    [
      '[sandbox]\nBwrap = {}\n',
      `${FILE}:2:1: [sandbox.Bwrap]: "Bwrap" is not a backend id (lowercase letters, digits, dashes)`,
    ],
    [
      'sandbox = { bwrap = 1 }\n',
      `${FILE}:1:13: sandbox.bwrap must be a table of the bwrap backend's settings`,
    ],
  ])('rejects %j', (text, message) => {
    expect(errorOf(() => userConfig(text)).message).toBe(message);
  });

  it('ignores a removed feature with a warning and maps a legacy name with one', () => {
    const config = userConfig(
      '[features]\nstreamable_shell = true\nexperimental_use_unified_exec_tool = false\n',
    );
    expect(config.features.assignments.map((a) => [a.key, a.enabled])).toEqual([['unified_exec', false]]);
    expect(config.warnings).toEqual([
      `features.streamable_shell at ${FILE}:2: feature "streamable_shell" was removed (superseded by unified_exec); the setting is ignored`,
      `features.experimental_use_unified_exec_tool at ${FILE}:3 is a legacy name; write features.unified_exec instead`,
    ]);
  });
});

describe('managed requirements', () => {
  it('reads pins and allow-lists', () => {
    const parsed = requirements(`allowed_approval_policies = ["on-request", "never"]
allowed_sandbox_modes = ["read-only", "workspace-write"]
allowed_sandbox_backends = ["bwrap"]

[features]
unified_exec = true
`);
    expect(parsed.allowedApprovalPolicies?.values).toEqual(['on-request', 'never']);
    expect(parsed.allowedSandboxModes?.values).toEqual(['read-only', 'workspace-write']);
    expect(parsed.allowedSandboxBackends?.values).toEqual(['bwrap']);
    expect(parsed.allowedSandboxPlugins).toBeUndefined();
    expect(parsed.features.assignments).toEqual([
      {
        key: 'unified_exec',
        enabled: true,
        layer: 'managed',
        location: { file: REQ, line: 6, column: 1 },
        profile: undefined,
      },
    ]);
  });

  it('reads sandbox_plugins and allowed_sandbox_plugins, an empty list allowing none', () => {
    const parsed = requirements('sandbox_plugins = ["/opt/acme/x.mjs"]\nallowed_sandbox_plugins = []\n');
    expect(parsed.sandboxPlugins?.values).toEqual([
      { value: '/opt/acme/x.mjs', location: { file: REQ, line: 1, column: 20 } },
    ]);
    expect(parsed.allowedSandboxPlugins).toEqual({ values: [], location: { file: REQ, line: 2, column: 1 } });
    const pinned = requirements('[sandbox.bwrap]\npath = "/opt/bwrap"\n').sandbox.bwrap;
    expect(pinned?.value).toEqual({ path: '/opt/bwrap' });
    expect(pinned?.locate(['path'])).toEqual({ file: REQ, line: 2, column: 1 });
  });

  it.each([
    [
      'allowed_approval_policies = ["on-request", "on-requst"]\n',
      `${REQ}:1:44: allowed_approval_policies[1]: unknown value "on-requst" (did you mean "on-request"?); expected one of untrusted, on-failure, on-request, never, granular`,
    ],
    ['allowed_sandbox_modes = []\n', `${REQ}:1:1: allowed_sandbox_modes must allow at least one value`],
    [
      'allowed_sandbox_modes = "read-only"\n',
      `${REQ}:1:1: allowed_sandbox_modes must be an array of strings, got "read-only"`,
    ],
    ['allowed_sandbox_backends = [1]\n', `${REQ}:1:29: allowed_sandbox_backends[0] must be a string, got 1`],
    [
      'allowed_sandbox_backends = ["Bwrap"]\n',
      `${REQ}:1:29: allowed_sandbox_backends[0]: "Bwrap" is not a backend id (lowercase letters, digits, dashes)`,
    ],
    [
      'profile = "x"\n',
      `${REQ}:1:1: unknown key profile; known keys here: features, allowed_approval_policies, allowed_sandbox_modes, allowed_sandbox_backends, sandbox_plugins, allowed_sandbox_plugins, sandbox, deny_read, network, allow_unix_sockets, allowed_environments, environments`,
    ],
    ['deny_read = ["~x"]\n', `${REQ}:1:14: deny_read[0]: "~x": only ~ and ~/… are expanded`],
  ])('rejects %j', (text, message) => {
    expect(errorOf(() => requirements(text)).message).toContain(message);
  });

  it('reads deny_read', () => {
    expect(requirements('deny_read = ["/srv/keys", "**/*.pem"]\n').denyRead).toEqual({
      values: ['/srv/keys', '**/*.pem'],
      location: { file: REQ, line: 1, column: 1 },
    });
  });

  it('refuses a choice outside the allow-list, naming both sources', () => {
    const parsed = requirements('\nallowed_sandbox_modes = ["read-only"]\n');
    expect(() =>
      checkRequirements(parsed, { sandboxMode: { value: 'danger-full-access', source: `${FILE}:4` } }),
    ).toThrow(
      `${REQ}:2:1: sandbox mode "danger-full-access" (from ${FILE}:4) is not allowed here: allowed_sandbox_modes = ["read-only"]`,
    );
    expect(() =>
      checkRequirements(parsed, { sandboxMode: { value: 'read-only', source: '--sandbox' } }),
    ).not.toThrow();
    expect(() =>
      checkRequirements(parsed, { approvalPolicy: { value: 'never', source: '--approval' } }),
    ).not.toThrow();
    expect(() =>
      checkRequirements(undefined, { sandboxMode: { value: 'read-only', source: '--sandbox' } }),
    ).not.toThrow();
  });
});

describe('-c overrides', () => {
  const withOverrides = (text: string | undefined, ...args: string[]) =>
    parseUserConfig(
      applyConfigOverrides(
        text === undefined ? undefined : parseTomlDocument(text, FILE),
        args.map(parseConfigOverride),
        FILE,
      ),
    );

  it('reads values as TOML, falling back to a string', () => {
    expect(parseConfigOverride('sandbox_workspace_write.network_access=true')).toEqual({
      argument: 'sandbox_workspace_write.network_access=true',
      path: ['sandbox_workspace_write', 'network_access'],
      value: true,
    });
    expect(parseConfigOverride('sandbox_mode=read-only').value).toBe('read-only');
    expect(parseConfigOverride('deny_read=["~/.ssh", "*.pem"]').value).toEqual(['~/.ssh', '*.pem']);
    expect(parseConfigOverride('"features".unified_exec = false').path).toEqual(['features', 'unified_exec']);
    expect(parseConfigOverride('shell_environment_policy={ inherit = "core" }').value).toEqual({
      inherit: 'core',
    });
    // Not one TOML value: the whole text.
    expect(parseConfigOverride('approval_policy=1\nx = 2').value).toBe('1\nx = 2');
    expect(parseConfigOverride('bwrap_path=').value).toBe('');
  });

  it('refuses an argument without = or with a malformed key, naming it', () => {
    expect(errorOf(() => parseConfigOverride('sandbox_mode')).message).toBe(
      '-c sandbox_mode: expected key=value (e.g. -c sandbox_mode=read-only)',
    );
    expect(errorOf(() => parseConfigOverride('a b=1')).message).toBe(
      '-c a b=1: "a b" is not a config key (dotted TOML keys, e.g. features.unified_exec)',
    );
  });

  it('writes over the file, later overrides winning, and keeps the rest', () => {
    const config = withOverrides(
      'sandbox_mode = "read-only"\n[sandbox_workspace_write]\nwritable_roots = ["/a"]\n[features]\nunified_exec = true\n',
      'sandbox_mode=workspace-write',
      'sandbox_workspace_write.network_access=true',
      'features.shell_tool=false',
      'sandbox_mode=danger-full-access',
    );
    expect(config.session.sandboxMode).toEqual({
      value: 'danger-full-access',
      location: { file: '-c sandbox_mode=danger-full-access' },
    });
    expect(config.session.workspaceWrite?.value).toMatchObject({
      writableRoots: ['/a'],
      networkAccess: true,
    });
    expect(config.features.assignments.map((a) => [a.key, a.enabled, a.location])).toEqual([
      ['unified_exec', true, { file: FILE, line: 5, column: 1 }],
      ['shell_tool', false, { file: '-c features.shell_tool=false' }],
    ]);
    expect(withOverrides(undefined, 'deny_read=["~/.ssh"]').session.denyRead).toEqual({
      value: ['~/.ssh'],
      location: { file: '-c deny_read=["~/.ssh"]' },
    });
  });

  it('validates with the config parser, naming the argument', () => {
    expect(errorOf(() => withOverrides(undefined, 'sandbox_mode=read-onyl')).message).toBe(
      '-c sandbox_mode=read-onyl: sandbox_mode must be one of read-only, workspace-write, danger-full-access, external-sandbox, got "read-onyl" (did you mean "read-only"?)',
    );
    expect(errorOf(() => withOverrides('[features]\n', 'features.unifed_exec=false')).message).toBe(
      '-c features.unifed_exec=false: unknown feature "unifed_exec" (did you mean "unified_exec"?)',
    );
    expect(errorOf(() => withOverrides(undefined, 'sandbox_workspace_write.network=true')).message).toBe(
      '-c sandbox_workspace_write.network=true: sandbox_workspace_write.network must be "off", "on" or a table { allow = […], deny = […] }, got true; write "on"',
    );
    expect(errorOf(() => withOverrides(undefined, 'colour=red')).message).toContain(
      '-c colour=red: unknown key colour; known keys here:',
    );
    // A mistake the override did not make is still the file's.
    expect(errorOf(() => withOverrides('sandbox_mod = "x"\n', 'sandbox_mode=read-only')).message).toBe(
      `${FILE}:1:1: unknown key sandbox_mod (did you mean "sandbox" or "sandbox_mode"?)`,
    );
  });
});
