import { envPolicySchema } from '@ux/protocol';
import type { ShellEnvironmentPolicy } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { decodeEnvPolicy, encodeEnvPolicy } from '../exec-server/env-policy-codec.js';
import {
  applyShellEnvironmentPolicy,
  excludedByShellEnvironmentPolicy,
} from './apply-shell-environment-policy.js';

const HOST = {
  PATH: '/usr/bin:/bin',
  HOME: '/home/dev',
  path: '/lower/case/path',
  USER: 'dev',
  LANG: 'C.UTF-8',
  EDITOR: 'vim',
  GITHUB_TOKEN: 'ghp_x',
  AWS_SECRET_ACCESS_KEY: 'secret',
  ssh_auth_key: 'k',
  UNSET: undefined,
};

const names = (env: Record<string, string>) => Object.keys(env).sort();

describe('applyShellEnvironmentPolicy', () => {
  it('inherits everything but credential-looking names by default; undefined values are absent', () => {
    expect(applyShellEnvironmentPolicy(HOST)).toEqual({
      PATH: '/usr/bin:/bin',
      HOME: '/home/dev',
      path: '/lower/case/path',
      USER: 'dev',
      LANG: 'C.UTF-8',
      EDITOR: 'vim',
    });
    expect(applyShellEnvironmentPolicy(HOST, { inherit: 'all' })).toEqual(applyShellEnvironmentPolicy(HOST));
  });

  it('inherits only the core names, matched exactly, or nothing', () => {
    expect(names(applyShellEnvironmentPolicy(HOST, { inherit: 'core' }))).toEqual(['HOME', 'PATH', 'USER']);
    expect(applyShellEnvironmentPolicy(HOST, { inherit: 'none' })).toEqual({});
    expect(applyShellEnvironmentPolicy(HOST, { inherit: 'none', set: { ONLY: 'yes' } })).toEqual({
      ONLY: 'yes',
    });
  });

  it('drops KEY, SECRET and TOKEN names in any case unless the default excludes are ignored', () => {
    const kept = applyShellEnvironmentPolicy(HOST, { ignoreDefaultExcludes: true });
    expect(kept).toMatchObject({ GITHUB_TOKEN: 'ghp_x', AWS_SECRET_ACCESS_KEY: 'secret', ssh_auth_key: 'k' });
    const dropped = applyShellEnvironmentPolicy({
      my_Token: '1',
      Secretive: '2',
      KEYRING: '3',
      MONKEY: '4',
      OK: '5',
    });
    expect(dropped).toEqual({ OK: '5' });
    // `core` is filtered by the default excludes too (none of its names match them).
    expect(applyShellEnvironmentPolicy({ PATH: '/bin', TOKEN: 't' }, { inherit: 'core' })).toEqual({
      PATH: '/bin',
    });
  });

  it('applies exclude globs without regard to case, on top of the default excludes', () => {
    expect(names(applyShellEnvironmentPolicy(HOST, { exclude: ['edit*', 'L?NG'] }))).toEqual([
      'HOME',
      'PATH',
      'USER',
      'path',
    ]);
    // Ignoring the default excludes keeps them, but not what `exclude` names.
    expect(
      names(applyShellEnvironmentPolicy(HOST, { ignoreDefaultExcludes: true, exclude: ['*_TOKEN'] })),
    ).not.toContain('GITHUB_TOKEN');
  });

  it('sets variables after the filters: set overrides and is not excluded', () => {
    const env = applyShellEnvironmentPolicy(HOST, {
      exclude: ['EDITOR'],
      set: { EDITOR: 'nano', PATH: '/custom', API_TOKEN: 'mine' },
    });
    expect(env).toMatchObject({ EDITOR: 'nano', PATH: '/custom', API_TOKEN: 'mine' });
  });

  it('an empty includeOnly filters nothing (PATH stays)', () => {
    const env = applyShellEnvironmentPolicy(HOST, { includeOnly: [] });
    expect(env).toEqual(applyShellEnvironmentPolicy(HOST));
    expect(env.PATH).toBe('/usr/bin:/bin');
  });

  it('a non-empty includeOnly keeps only matching names, case-insensitively, set ones included', () => {
    const env = applyShellEnvironmentPolicy(HOST, {
      includeOnly: ['PATH', 'h*'],
      set: { HISTFILE: '/dev/null', EXTRA: '1' },
    });
    // `path` matches `PATH` without regard to case; EXTRA was set but is outside includeOnly.
    expect(env).toEqual({
      PATH: '/usr/bin:/bin',
      path: '/lower/case/path',
      HOME: '/home/dev',
      HISTFILE: '/dev/null',
    });
  });

  it('excludes win over includeOnly: a name both excluded and included is dropped', () => {
    expect(
      applyShellEnvironmentPolicy(HOST, { includeOnly: ['*TOKEN*', 'PATH'], exclude: ['path'] }),
    ).toEqual({});
  });

  it('keeps the base untouched', () => {
    const base = { PATH: '/bin', X: '1' };
    applyShellEnvironmentPolicy(base, { set: { X: '2' }, includeOnly: ['PATH'] });
    expect(base).toEqual({ PATH: '/bin', X: '1' });
  });
});

describe('excludedByShellEnvironmentPolicy', () => {
  it('names what the policy keeps out: default excludes, exclude, and names outside a non-empty includeOnly', () => {
    const byDefault = excludedByShellEnvironmentPolicy();
    expect(['GH_TOKEN', 'api_key', 'PATH', 'EDITOR'].map(byDefault)).toEqual([true, true, false, false]);
    expect(excludedByShellEnvironmentPolicy({ ignoreDefaultExcludes: true })('GH_TOKEN')).toBe(false);
    expect(excludedByShellEnvironmentPolicy({ exclude: ['edit*'] })('EDITOR')).toBe(true);
    expect(excludedByShellEnvironmentPolicy({ includeOnly: [] })('EDITOR')).toBe(false);
    const only = excludedByShellEnvironmentPolicy({ includeOnly: ['path'] });
    expect([only('PATH'), only('EDITOR')]).toEqual([false, true]);
  });
});

describe('the wire envPolicy', () => {
  const policies: ShellEnvironmentPolicy[] = [
    {},
    { inherit: 'core' },
    { inherit: 'none', set: { A: '1' } },
    { ignoreDefaultExcludes: true, exclude: ['EDIT*'], includeOnly: ['PATH', 'E*'], set: { EXTRA: '1' } },
    { includeOnly: [] },
  ];

  it('writes every field, with the defaults', () => {
    expect(encodeEnvPolicy({})).toEqual({
      inherit: 'all',
      ignoreDefaultExcludes: false,
      exclude: [],
      set: {},
      includeOnly: [],
    });
  });

  it.each(policies)('round-trips %j through JSON and the schema with the same environment', (policy) => {
    const wire = envPolicySchema.parse(JSON.parse(JSON.stringify(encodeEnvPolicy(policy))));
    const decoded = decodeEnvPolicy(wire);
    expect(encodeEnvPolicy(decoded)).toEqual(encodeEnvPolicy(policy));
    expect(applyShellEnvironmentPolicy(HOST, decoded)).toEqual(applyShellEnvironmentPolicy(HOST, policy));
  });
});
