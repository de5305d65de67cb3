import { describe, expect, it } from 'vitest';
import { envFromPolicy } from './env-from-policy.js';

const server = {
  HOME: '/home/dev',
  PATH: '/bin',
  X: '1',
  AWS_SECRET_ACCESS_KEY: 's',
  GH_TOKEN: 't',
  LANG: 'C',
};
const policy = {
  inherit: 'all' as const,
  ignoreDefaultExcludes: false,
  exclude: [],
  set: {},
  includeOnly: [],
};

describe('envFromPolicy', () => {
  it('passes env exactly without a policy', () => {
    expect(envFromPolicy(server, null, { A: 'b' })).toEqual({ A: 'b' });
  });

  it('inherits the server environment minus secrets, then set, then env', () => {
    expect(envFromPolicy(server, { ...policy, set: { FOO: 'bar', X: 'set' } }, { X: 'overlay' })).toEqual({
      HOME: '/home/dev',
      PATH: '/bin',
      LANG: 'C',
      FOO: 'bar',
      X: 'overlay',
    });
    expect(envFromPolicy(server, { ...policy, ignoreDefaultExcludes: true }, {})).toHaveProperty(
      'GH_TOKEN',
      't',
    );
  });

  it('applies core, none, exclude and includeOnly as case-insensitive globs', () => {
    expect(Object.keys(envFromPolicy(server, { ...policy, inherit: 'core' }, {})).sort()).toEqual([
      'HOME',
      'PATH',
    ]);
    expect(envFromPolicy(server, { ...policy, inherit: 'none' }, { A: 'b' })).toEqual({ A: 'b' });
    expect(Object.keys(envFromPolicy(server, { ...policy, exclude: ['l*'] }, {})).sort()).toEqual([
      'HOME',
      'PATH',
      'X',
    ]);
    expect(Object.keys(envFromPolicy(server, { ...policy, includeOnly: ['PATH', 'h*'] }, {})).sort()).toEqual(
      ['HOME', 'PATH'],
    );
  });
});
