import { ConfigError } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { resolveSessionSettings } from './resolve-session-settings.js';
import { sessionEffectivePolicy } from './session-effective-policy.js';
import { parseTomlDocument } from './toml-document.js';
import { parseUserConfig } from './user-config.js';

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
