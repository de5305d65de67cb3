import { parseTomlDocument, parseUserConfig, resolveSessionSettings } from '@ux/features';
import { ConfigError } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { remoteEnvironmentPolicyProblem, sessionEffectivePolicy } from './session-policy.js';

const FILE = '/home/me/.ux/config.toml';
const settings = (text: string, cli: Parameters<typeof resolveSessionSettings>[0]['cli'] = {}) =>
  resolveSessionSettings({ user: parseUserConfig(parseTomlDocument(text, FILE)), cli, homeDir: '/home/me' });

describe('sessionEffectivePolicy', () => {
  it('makes deny-read entries absolute and maps the network, as ux does', () => {
    const policy = sessionEffectivePolicy(
      settings('deny_read = ["~/.aws", "secrets/*.env"]\n[sandbox_workspace_write]\nnetwork_access = true\n'),
      { cwd: '/work/project', homeDir: '/home/me' },
    );
    expect(policy.fileSystem.kind).toBe('restricted');
    const denied =
      policy.fileSystem.kind === 'restricted'
        ? policy.fileSystem.entries.filter((e) => e.access === 'none')
        : [];
    expect(denied).toEqual([
      { path: { type: 'path', path: '/home/me/.aws' }, access: 'none' },
      { path: { type: 'glob', pattern: '/work/project/secrets/*.env' }, access: 'none' },
    ]);
    expect(policy.network).toBe('enabled');
  });

  it('refuses deny-read, at its file and line, and a network flag with a mode that has no sandbox', () => {
    const error = (() => {
      try {
        sessionEffectivePolicy(settings('sandbox_mode = "danger-full-access"\ndeny_read = ["~/.aws"]\n'), {
          cwd: '/work',
        });
      } catch (caught) {
        return caught;
      }
    })();
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(`${FILE}:2:`);
    expect((error as Error).message).toContain('deny_read needs a sandbox to hide "~/.aws"');
    expect(() =>
      sessionEffectivePolicy(settings('sandbox_mode = "danger-full-access"\n'), {
        cwd: '/work',
        flagged: ['--no-network'],
      }),
    ).toThrow('--no-network needs a sandbox, but sandbox mode danger-full-access');
    expect(
      sessionEffectivePolicy(settings('sandbox_mode = "danger-full-access"\n'), { cwd: '/work' }).fileSystem
        .kind,
    ).toBe('unrestricted');
  });

  it('refuses a network by domain when commands run in a remote environment by default', () => {
    const remote = `default_environment = "box"\n[environments.box]\nurl = "wss://box.example:8765"\n`;
    const byDomain = settings(remote, { allowDomains: [{ value: 'a.org', flag: '--allow-domain a.org' }] });
    expect(() => sessionEffectivePolicy(byDomain, { cwd: '/work' })).toThrow(
      'network by domain (from --allow-domain a.org) cannot be used there: commands run in the remote environment "box"',
    );
    expect(sessionEffectivePolicy(settings(remote), { cwd: '/work' }).network).toBe('restricted');
  });
});

describe('remoteEnvironmentPolicyProblem', () => {
  it('names what a remote server cannot apply, and nothing else', () => {
    expect(remoteEnvironmentPolicyProblem({ network: 'proxied' }, 'box')).toContain(
      'network by domain cannot be used there',
    );
    expect(
      remoteEnvironmentPolicyProblem({ network: 'restricted', allowUnixSockets: ['/s'] }, 'box'),
    ).toContain('allow_unix_sockets entry "/s"');
    expect(remoteEnvironmentPolicyProblem({ network: 'restricted' }, 'box')).toBeUndefined();
  });
});

describe('createUnifiedExec with a remote default environment', () => {
  it('refuses a network by domain it could not apply there, before anything runs', async () => {
    const { makeDoor } = await import('./test-support.js');
    const remote = { spawner: { spawn: async () => Promise.reject(new Error('never started')) } };
    expect(() =>
      makeDoor({
        orchestrator: {
          policy: {
            fileSystem: { kind: 'restricted', entries: [] },
            network: 'proxied',
            networkProxy: { unixSocket: '/tmp/ux-net/proxy.sock' },
          },
        },
        door: { environments: { box: remote as never }, localEnvironment: false },
      }),
    ).toThrow(/network by domain cannot be used there: commands run in the remote environment "box"/);
  });
});
