import { ConfigError } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { parseRequirements } from './requirements.js';
import { resolveSessionSettings } from './resolve-session-settings.js';
import { parseTomlDocument } from './toml-document.js';
import { parseUserConfig } from './user-config.js';

const FILE = '/home/dev/.ux/config.toml';
const REQ = '/etc/ux/requirements.toml';

const userConfig = (text: string) => parseUserConfig(parseTomlDocument(text, FILE));
const requirements = (text: string) => parseRequirements(parseTomlDocument(text, REQ));

function messageOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (ConfigError.isInstance(error)) return error.message;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('session keys of config.toml', () => {
  it('reads every key', () => {
    const config = userConfig(`approval_policy = "untrusted"
sandbox_mode = "workspace-write"
rules = ["/home/dev/.ux/rules/default.rules"]
sandbox_backends = ["bwrap"]

[sandbox_workspace_write]
writable_roots = ["/home/dev/cache"]
network_access = true
exclude_slash_tmp = true

[shell_environment_policy]
inherit = "core"
exclude = ["AWS_*"]
include_only = ["PATH", "HOME"]
set = { CI = "1" }
`);
    expect(config.session.approvalPolicy).toEqual({
      value: 'untrusted',
      location: { file: FILE, line: 1, column: 1 },
    });
    expect(config.session.sandboxMode?.value).toBe('workspace-write');
    expect(config.session.rules?.value).toEqual(['/home/dev/.ux/rules/default.rules']);
    expect(config.session.sandboxBackends?.value).toEqual(['bwrap']);
    expect(config.session.workspaceWrite?.value).toEqual({
      writableRoots: ['/home/dev/cache'],
      networkAccess: true,
      network: { value: { mode: 'on' }, location: { file: FILE, line: 8, column: 1 } },
      excludeTmpdirEnvVar: false,
      excludeSlashTmp: true,
      privateTmp: true,
    });
    expect(config.session.shellEnvironmentPolicy?.value).toEqual({
      inherit: 'core',
      exclude: ['AWS_*'],
      includeOnly: ['PATH', 'HOME'],
      set: { CI: '1' },
    });
  });

  it('reads private_tmp (default true) and refuses a value that is not a boolean', () => {
    expect(
      userConfig('[sandbox_workspace_write]\nprivate_tmp = false\n').session.workspaceWrite?.value.privateTmp,
    ).toBe(false);
    expect(
      userConfig('[sandbox_workspace_write]\nwritable_roots = []\n').session.workspaceWrite?.value.privateTmp,
    ).toBe(true);
    expect(() => userConfig('[sandbox_workspace_write]\nprivate_tmp = "no"\n')).toThrow(
      /sandbox_workspace_write\.private_tmp must be true or false, got "no"/,
    );
  });

  it('reads a granular approval policy', () => {
    const config = userConfig('[approval_policy.granular]\nsandbox_approval = false\n');
    expect(config.session.approvalPolicy?.value).toEqual({
      granular: {
        sandbox_approval: false,
        rules: true,
        skill_approval: true,
        request_permissions: true,
        mcp_elicitations: true,
      },
    });
  });

  it.each([
    ['approval_policy = "sometimes"', `${FILE}:1:1: approval_policy: unknown approval policy "sometimes"`],
    ['approval_policy = "on-requst"', '(did you mean "on-request"?)'],
    [
      'approval_policy = 3',
      `${FILE}:1:1: approval_policy must be one of untrusted, on-failure, on-request, never or a table`,
    ],
    [
      '[approval_policy.granular]\nsandbox = false',
      `${FILE}:2:1: unknown key approval_policy.granular.sandbox (did you mean "sandbox_approval"?)`,
    ],
    [
      '[approval_policy.granular]\nrules = "no"',
      `${FILE}:2:1: approval_policy.granular.rules must be true or false, got "no"`,
    ],
    [
      'sandbox_mode = "workspace"',
      `${FILE}:1:1: sandbox_mode must be one of read-only, workspace-write, danger-full-access, external-sandbox, got "workspace"`,
    ],
    [
      '[sandbox_workspace_write]\nwritable_roots = ["relative/dir"]',
      `${FILE}:2:19: sandbox_workspace_write.writable_roots[0] must be an absolute path, got "relative/dir"`,
    ],
    [
      '[sandbox_workspace_write]\nnetwork = true',
      `${FILE}:2:1: sandbox_workspace_write.network must be "off", "on" or a table { allow = […], deny = […] }, got true; write "on"`,
    ],
    [
      '[sandbox_workspace_write]\nnetwork_access = "yes"',
      `${FILE}:2:1: sandbox_workspace_write.network_access must be true or false, got "yes"`,
    ],
    [
      '[shell_environment_policy]\ninherit = "some"',
      `${FILE}:2:1: shell_environment_policy.inherit must be "all", "core" or "none", got "some"`,
    ],
    ['[shell_environment_policy]\nset = { "A-B" = "1" }', `"A-B" is not a valid environment variable name`],
    ['[shell_environment_policy]\nset = { A = 1 }', 'shell_environment_policy.set.A must be a string, got 1'],
    ['rules = "one.rules"', `${FILE}:1:1: rules must be an array of strings, got "one.rules"`],
    ['sandbox_backends = []', 'sandbox_backends must name at least one backend'],
    ['sandbox_backends = ["Bwrap"]', `${FILE}:1:21: "Bwrap" is not a backend id`],
    [
      'sandbox_mod = "read-only"',
      `${FILE}:1:1: unknown key sandbox_mod (did you mean "sandbox" or "sandbox_mode"?)`,
    ],
    ['[profiles.p]\nrules = []', `${FILE}:2:1: unknown key profiles.p.rules`],
    ['deny_read = "~/.ssh"', `${FILE}:1:1: deny_read must be an array of paths or globs, got "~/.ssh"`],
    ['deny_read = ["~/.ssh", ""]', `${FILE}:1:24: deny_read[1] must be a non-empty string, got ""`],
    [
      'deny_read = ["~root/.ssh"]',
      `${FILE}:1:14: deny_read[0]: "~root/.ssh": only ~ and ~/… are expanded (to the home directory); write the path out`,
    ],
    ['deny_raed = []', `${FILE}:1:1: unknown key deny_raed (did you mean "deny_read"?)`],
    ['[profiles.p]\ndeny_read = []', `${FILE}:2:1: unknown key profiles.p.deny_read`],
  ])('refuses %j', (text, message) => {
    expect(messageOf(() => userConfig(text))).toContain(message);
  });
});

describe('deny_read', () => {
  it('keeps paths and globs as written, with where they were written', () => {
    const config = userConfig('deny_read = ["~/.ssh", "**/*.pem", "/etc/shadow", "secrets"]\n');
    expect(config.session.denyRead).toEqual({
      value: ['~/.ssh', '**/*.pem', '/etc/shadow', 'secrets'],
      location: { file: FILE, line: 1, column: 1 },
    });
  });

  it('lists requirements first, then config, then flags, each with its source', () => {
    const resolved = resolveSessionSettings({
      user: userConfig('deny_read = ["~/.ssh"]\n'),
      requirements: requirements('\ndeny_read = ["/etc/ux/secret"]\n'),
      cli: { denyRead: [{ value: '*.key', flag: '--deny-read *.key' }] },
    });
    expect(resolved.denyRead).toEqual([
      {
        pattern: '/etc/ux/secret',
        source: `${REQ}:2:1`,
        location: { file: REQ, line: 2, column: 1 },
      },
      { pattern: '~/.ssh', source: `${FILE}:1:1`, location: { file: FILE, line: 1, column: 1 } },
      { pattern: '*.key', source: '--deny-read *.key' },
    ]);
    expect(resolveSessionSettings({}).denyRead).toEqual([]);
  });

  it('adds flag writable roots to the configured ones and lets a network flag win over the config', () => {
    const resolved = resolveSessionSettings({
      user: userConfig('[sandbox_workspace_write]\nwritable_roots = ["/a"]\nnetwork_access = true\n'),
      cli: { writableRoots: ['/b', '/a'], network: { value: false, flag: '--no-network' } },
    });
    expect(resolved.workspaceWrite.writableRoots).toEqual(['/a', '/b']);
    expect(resolved.workspaceWrite.networkAccess).toBe(true);
    expect(resolved.network).toMatchObject({ mode: 'off', source: '--no-network' });
    expect(resolveSessionSettings({}).network).toMatchObject({ mode: 'off', source: 'default' });
  });
});

describe('resolveSessionSettings', () => {
  const user = userConfig(`approval_policy = "untrusted"
sandbox_mode = "read-only"
profile = "ci"
[profiles.ci]
approval_policy = "never"
[profiles.dev]
sandbox_mode = "workspace-write"
`);

  it('layers defaults < config < profile < command line, naming who chose', () => {
    expect(resolveSessionSettings({}).approvalPolicy).toEqual({ value: 'on-request', source: 'default' });
    expect(resolveSessionSettings({}).sandboxMode).toEqual({ value: 'workspace-write', source: 'default' });
    const plain = resolveSessionSettings({ user });
    expect(plain.approvalPolicy).toEqual({ value: 'untrusted', source: `${FILE}:1:1` });
    const ci = resolveSessionSettings({ user, profile: 'ci' });
    expect(ci.approvalPolicy).toEqual({ value: 'never', source: `${FILE}:5:1` });
    expect(ci.sandboxMode).toEqual({ value: 'read-only', source: `${FILE}:2:1` });
    const flagged = resolveSessionSettings({
      user,
      profile: 'dev',
      cli: { approvalPolicy: { value: 'on-failure', flag: '--approval on-failure' } },
    });
    expect(flagged.approvalPolicy).toEqual({ value: 'on-failure', source: '--approval on-failure' });
    expect(flagged.sandboxMode).toEqual({ value: 'workspace-write', source: `${FILE}:7:1` });
  });

  it('refuses a choice the requirements do not allow, naming both files', () => {
    const managed = requirements(
      'allowed_approval_policies = ["untrusted", "on-request"]\nallowed_sandbox_modes = ["read-only", "workspace-write"]\nallowed_sandbox_backends = ["bwrap"]\n',
    );
    expect(messageOf(() => resolveSessionSettings({ user, profile: 'ci', requirements: managed }))).toBe(
      `${REQ}:1:1: approval policy "never" (from ${FILE}:5:1) is not allowed here: allowed_approval_policies = ["untrusted", "on-request"]`,
    );
    expect(
      messageOf(() =>
        resolveSessionSettings({
          requirements: managed,
          cli: { sandboxMode: { value: 'danger-full-access', flag: '--sandbox danger-full-access' } },
        }),
      ),
    ).toBe(
      `${REQ}:2:1: sandbox mode "danger-full-access" (from --sandbox danger-full-access) is not allowed here: allowed_sandbox_modes = ["read-only", "workspace-write"]`,
    );
    const backends = userConfig('sandbox_backends = ["bwrap", "seatbelt"]\n');
    expect(messageOf(() => resolveSessionSettings({ user: backends, requirements: managed }))).toBe(
      `${REQ}:3:1: sandbox backend "seatbelt" (from ${FILE}:1:1) is not allowed here: allowed_sandbox_backends = ["bwrap"]`,
    );
  });

  it('gives way to the requirements when only a default is at stake', () => {
    const managed = requirements(
      'allowed_approval_policies = ["untrusted"]\nallowed_sandbox_modes = ["read-only"]\n',
    );
    const resolved = resolveSessionSettings({ requirements: managed });
    expect(resolved.approvalPolicy).toEqual({ value: 'untrusted', source: 'default' });
    expect(resolved.sandboxMode).toEqual({ value: 'read-only', source: 'default' });
    const granular = resolveSessionSettings({
      requirements: requirements('allowed_approval_policies = ["granular"]\n'),
    });
    expect(granular.approvalPolicy.value).toMatchObject({ granular: { sandbox_approval: true } });
  });

  it('passes the enabled and allowed backends on', () => {
    const resolved = resolveSessionSettings({
      user: userConfig('sandbox_backends = ["bwrap"]\n'),
      requirements: requirements('allowed_sandbox_backends = ["bwrap", "seatbelt"]\n'),
    });
    expect(resolved.enabledBackends).toEqual({ value: ['bwrap'], source: `${FILE}:1:1` });
    expect(resolved.allowedBackends).toEqual(['bwrap', 'seatbelt']);
  });
});
