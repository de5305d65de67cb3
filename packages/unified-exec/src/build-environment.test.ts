import { describe, expect, it } from 'vitest';
import { buildEnvironment, PINNED_ENVIRONMENT } from './build-environment.js';

// The policy's own rules (inherit, excludes, set, includeOnly) are tested once, with
// `applyShellEnvironmentPolicy` in @ux/protocol; this is what the door adds on top.
const HOST = {
  PATH: '/usr/bin:/bin',
  HOME: '/home/dev',
  NO_COLOR: '0',
  TERM: 'xterm-256color',
  GITHUB_TOKEN: 'ghp_x',
  EDITOR: 'vim',
  UNSET: undefined,
};

describe('buildEnvironment', () => {
  it('applies the policy, adds the thread id, then forces the pinned keys over what the host had', () => {
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

  it('pins over the policy too: include-only and set cannot drop or change a pinned key', () => {
    const env = buildEnvironment(HOST, { includeOnly: ['PATH'], set: { PAGER: 'less' } });
    expect(env).toEqual({ PATH: '/usr/bin:/bin', ...PINNED_ENVIRONMENT });
    expect(env.PAGER).toBe('cat');
  });

  it('keeps PATH under an empty include-only', () => {
    expect(buildEnvironment(HOST, { includeOnly: [] }).PATH).toBe('/usr/bin:/bin');
  });
});
