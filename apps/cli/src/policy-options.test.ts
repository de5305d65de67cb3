import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '@ux/protocol/core';
import { tempDir } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { withNetworkProxy } from './cli-session.js';
import type { Io } from './io.js';
import {
  loadPolicySession,
  type PolicyValues,
  policyFlags,
  policyHelp,
  sessionPolicy,
} from './policy-options.js';
import { UsageError } from './usage-error.js';

const HELP = 'ux exec --help';
const MODES = ['read-only', 'workspace-write', 'danger-full-access'] as const;

function place(files: { config?: string; requirements?: string } = {}) {
  const home = tempDir('ux-cli-policy-');
  const cwd = join(home, 'work');
  mkdirSync(cwd);
  if (files.config !== undefined) writeFileSync(join(home, 'config.toml'), files.config);
  if (files.requirements !== undefined) writeFileSync(join(home, 'requirements.toml'), files.requirements);
  const env = {
    HOME: home,
    UX_HOME: home,
    UX_REQUIREMENTS: join(home, 'requirements.toml'),
    PATH: '/usr/bin:/bin',
  };
  const io: Io = { stdout: () => undefined, stderr: () => undefined, env, platform: 'linux' };
  return { home, cwd, env, io };
}

function flagsOf(values: PolicyValues, where = place()) {
  return policyFlags(values, { cwd: where.cwd, env: where.env, helpCommand: HELP, modes: MODES });
}

/** The session's policy for these option values, as `ux exec` computes it. */
function policyOf(values: PolicyValues, where = place()) {
  const flags = flagsOf(values, where);
  const session = loadPolicySession(where.io, flags, HELP);
  return {
    session,
    policy: sessionPolicy(session, flags, { cwd: where.cwd, env: where.env, helpCommand: HELP }),
  };
}

function usageErrorOf(run: () => unknown): UsageError {
  try {
    run();
  } catch (error) {
    if (UsageError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a usage error');
}

describe('--allow-domain, --allow-unix-socket, --network, --no-network', () => {
  it('takes repeated --allow-domain and --allow-unix-socket, unix sockets made absolute (~ and --cwd)', () => {
    const where = place();
    const flags = flagsOf(
      {
        'allow-domain': ['github.com', '*.example.org', '10.0.0.5:8080'],
        'allow-unix-socket': ['~/agent.sock', 'run/tmux.sock', '/var/run/docker.sock'],
      },
      where,
    );
    expect(flags.allowDomains).toEqual(['github.com', '*.example.org', '10.0.0.5:8080']);
    expect(flags.allowUnixSockets).toEqual([
      join(where.home, 'agent.sock'),
      join(where.cwd, 'run/tmux.sock'),
      '/var/run/docker.sock',
    ]);
    expect(flagsOf({ network: true }).network).toBe(true);
    expect(flagsOf({ 'no-network': true }).network).toBe(false);
    expect(flagsOf({}).allowDomains).toBeUndefined();
  });

  it.each([
    [
      { 'allow-domain': ['https://github.com/x'] },
      '--allow-domain "https://github.com/x" is a URL, not a host name; write "github.com"',
    ],
    [{ 'allow-domain': ['*'] }, '--allow-domain "*" would allow every host'],
    [
      { 'allow-domain': ['*.com'] },
      '--allow-domain "*.com" would allow every name under the top-level domain ".com"',
    ],
    [{ 'allow-domain': [''] }, '--allow-domain "" is empty'],
    [
      { 'allow-domain': ['a.org'], 'no-network': true },
      '--allow-domain a.org limits the network to listed hosts and --no-network takes it away; give one',
    ],
    [
      { 'allow-domain': ['a.org'], network: true },
      '--allow-domain a.org limits the network to listed hosts and --network gives all of it; give one',
    ],
    [{ network: true, 'no-network': true }, '--network and --no-network contradict each other; give one'],
    [{ 'allow-unix-socket': [''] }, '--allow-unix-socket needs a path'],
  ] as [PolicyValues, string][])('refuses %j', (values, message) => {
    const error = usageErrorOf(() => flagsOf(values));
    expect(error.message).toContain(message);
    expect(error.helpCommand).toBe(HELP);
  });

  it('documents the new options in every policy help', () => {
    const help = policyHelp(MODES);
    expect(help).toContain('--allow-domain HOST');
    expect(help).toContain('--allow-unix-socket PATH');
    expect(help).toContain('--no-network');
  });
});

describe('the session policy', () => {
  it('is proxied with --allow-domain (the endpoint comes from the session proxy), with the unix sockets listed', () => {
    const where = place();
    const { policy, session } = policyOf(
      { 'allow-domain': ['github.com'], 'allow-unix-socket': ['/run/a.sock'] },
      where,
    );
    expect(policy.network).toBe('proxied');
    expect(policy.networkProxy).toBeUndefined();
    expect(policy.allowUnixSockets).toEqual(['/run/a.sock']);
    expect(session.settings.network.allow).toEqual([
      { pattern: 'github.com', source: '--allow-domain github.com' },
    ]);
    expect(withNetworkProxy(policy, { unixSocket: '/tmp/ux-net-x/proxy.sock' }).networkProxy).toEqual({
      unixSocket: '/tmp/ux-net-x/proxy.sock',
    });
  });

  it('maps off, on and by domain from the config, and leaves allowUnixSockets out when none are listed', () => {
    expect(policyOf({}).policy).toMatchObject({ network: 'restricted' });
    expect(policyOf({}).policy.allowUnixSockets).toBeUndefined();
    const on = place({ config: '[sandbox_workspace_write]\nnetwork = "on"\n' });
    expect(policyOf({}, on).policy.network).toBe('enabled');
    const listed = place({ config: '[sandbox_read_only]\nnetwork = { allow = ["pypi.org"] }\n' });
    expect(policyOf({ sandbox: 'read-only' }, listed).policy.network).toBe('proxied');
  });

  it('refuses --allow-domain and --allow-unix-socket without a sandbox, as --no-network', () => {
    for (const [values, first] of [
      [{ 'allow-domain': ['a.org'] }, '--allow-domain a.org'],
      [{ 'allow-unix-socket': ['/run/a.sock'] }, '--allow-unix-socket /run/a.sock'],
      [{ 'no-network': true }, '--no-network'],
    ] as [PolicyValues, string][]) {
      expect(usageErrorOf(() => policyOf({ ...values, sandbox: 'danger-full-access' })).message).toBe(
        `${first} needs a sandbox, but sandbox mode danger-full-access (from --sandbox danger-full-access) runs commands without a ux sandbox`,
      );
    }
  });

  it('refuses a flag the requirements do not allow, naming the requirements file and the flag', () => {
    const where = place({ requirements: '[network]\nallow = ["*.github.com"]\n' });
    let error: unknown;
    try {
      policyOf({ 'allow-domain': ['evil.org'] }, where);
    } catch (caught) {
      error = caught;
    }
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe(
      `${join(where.home, 'requirements.toml')}:2:1: network.allow entry "evil.org" (from --allow-domain evil.org) is not allowed here: no entry of network.allow = ["*.github.com"] covers it`,
    );
    expect(policyOf({ 'allow-domain': ['api.github.com'] }, where).policy.network).toBe('proxied');
  });

  it('refuses a network by domain or a unix socket list when commands run in a remote environment', () => {
    const config = '[environments.box]\ncommand = ["ux", "exec-server", "--listen", "stdio"]\n';
    const where = place({ config: `default_environment = "box"\n${config}` });
    expect(usageErrorOf(() => policyOf({ 'allow-domain': ['a.org'] }, where)).message).toBe(
      'network by domain (from --allow-domain a.org) cannot be used there: commands run in the remote environment "box" (default_environment or --env), and an exec-server cannot reach this machine\'s allow-list proxy; give that environment the network on or off (--network / --no-network)',
    );
    const configured = place({
      config: `default_environment = "box"\n[sandbox_workspace_write]\nallow_unix_sockets = ["/run/a.sock"]\n${config}`,
    });
    let error: unknown;
    try {
      policyOf({}, configured);
    } catch (caught) {
      error = caught;
    }
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(
      `${join(configured.home, 'config.toml')}:3:1: allow_unix_sockets entry "/run/a.sock" (from ${join(configured.home, 'config.toml')}:3:1) cannot be used there`,
    );
    // A local session with the same environment defined is fine.
    expect(policyOf({ 'allow-domain': ['a.org'] }, place({ config })).policy.network).toBe('proxied');
  });
});
