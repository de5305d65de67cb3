import { describe, expect, it } from 'vitest';
import { buildEnvironment, PINNED_ENVIRONMENT } from './build-environment.js';

const HOST = {
  PATH: '/usr/bin:/bin',
  HOME: '/home/dev',
  NO_COLOR: '0',
  TERM: 'xterm-256color',
  GITHUB_TOKEN: 'ghp_x',
  AWS_SECRET_ACCESS_KEY: 'secret',
  EDITOR: 'vim',
  UNSET: undefined,
};

describe('buildEnvironment', () => {
  it('inherits all but secret-looking names, then forces the pinned keys over what the host had', () => {
    const env = buildEnvironment(HOST, {}, 'thread-1');
    expect(env).toEqual({
      PATH: '/usr/bin:/bin',
      HOME: '/home/dev',
      EDITOR: 'vim',
      UX_THREAD_ID: 'thread-1',
      ...PINNED_ENVIRONMENT,
    });
    expect(env.NO_COLOR).toBe('1');
    expect(env.TERM).toBe('dumb');
    expect(env.COLORTERM).toBe('');
  });

  it('keeps secret-looking names when told to', () => {
    expect(buildEnvironment(HOST, { ignoreDefaultExcludes: true }).GITHUB_TOKEN).toBe('ghp_x');
  });

  it('inherits only the core variables, or none', () => {
    expect(Object.keys(buildEnvironment(HOST, { inherit: 'core' })).sort()).toEqual(
      ['HOME', 'PATH', ...Object.keys(PINNED_ENVIRONMENT)].sort(),
    );
    expect(buildEnvironment(HOST, { inherit: 'none' })).toEqual({ ...PINNED_ENVIRONMENT });
  });

  it('applies exclude and include-only globs case-insensitively, then set', () => {
    const env = buildEnvironment(HOST, {
      exclude: ['edit*'],
      includeOnly: ['PATH', 'h*'],
      set: { EXTRA: '1', PAGER: 'less' },
    });
    expect(env).toEqual({ PATH: '/usr/bin:/bin', HOME: '/home/dev', EXTRA: '1', ...PINNED_ENVIRONMENT });
    expect(env.PAGER).toBe('cat');
  });
});
