import type { EnvironmentConfig } from '@ux/config';
import { applyShellEnvironmentPolicy, excludedByShellEnvironmentPolicy } from '@ux/protocol-utils';
import { describe, expect, it } from 'vitest';
import { credentialVariables, withCredentialsWithheld, withoutCredentials } from './credential-variables.js';

const at = { file: '/home/u/.ux/config.toml', line: 1 };
const environments: EnvironmentConfig[] = [
  { id: 'local', kind: 'local' },
  { id: 'box', kind: 'websocket', url: 'ws://box:4500', tokenEnv: 'BOX_CRED', definedAt: at },
  { id: 'gpu', kind: 'websocket', url: 'ws://gpu:4500', tokenEnv: 'BOX_CRED', definedAt: at },
  { id: 'open', kind: 'websocket', url: 'ws://open:4500', definedAt: at },
  { id: 'dev', kind: 'command', command: ['ssh', 'dev'], definedAt: at },
  { id: 'ci', kind: 'websocket', url: 'ws://ci:4500', tokenEnv: 'CI_PASS', definedAt: at },
];

describe('credentialVariables', () => {
  it('names every token_env once, sorted', () => {
    expect(credentialVariables(environments)).toEqual(['BOX_CRED', 'CI_PASS']);
    expect(credentialVariables([{ id: 'local', kind: 'local' }])).toEqual([]);
  });
});

describe('withoutCredentials', () => {
  it('drops the credential variables (in any case) and keeps the rest', () => {
    const env = { PATH: '/bin', BOX_CRED: 's', box_cred: 's2', OTHER: 'o' };
    expect(withoutCredentials(env, ['BOX_CRED'])).toEqual({ PATH: '/bin', OTHER: 'o' });
    expect(withoutCredentials(env, [])).toBe(env);
  });
});

describe('withCredentialsWithheld', () => {
  const base = { PATH: '/bin', BOX_CRED: 'secret', OTHER_CRED: 'other' };

  it.each([
    ['the default policy', {}],
    ['inherit all with ignoreDefaultExcludes', { inherit: 'all', ignoreDefaultExcludes: true }],
    ['includeOnly naming it', { ignoreDefaultExcludes: true, includeOnly: ['BOX_CRED', 'OTHER_CRED'] }],
    ['set naming it', { ignoreDefaultExcludes: true, set: { BOX_CRED: 'from-set', KEPT: 'k' } }],
    ['an exclude of its own', { exclude: ['FOO_*'] }],
  ] as const)('%s: the credential never survives the policy, other variables do', (_name, policy) => {
    // Control: the policy alone keeps OTHER_CRED, and BOX_CRED except under the default excludes.
    expect(applyShellEnvironmentPolicy(base, policy).OTHER_CRED).toBe('other');
    const withheld = withCredentialsWithheld(policy, ['BOX_CRED']);
    const env = applyShellEnvironmentPolicy(base, withheld);
    expect(env.BOX_CRED).toBeUndefined();
    expect(env.OTHER_CRED).toBe('other');
    // Snapshots and remote servers read the same policy: the name is excluded there too.
    expect(excludedByShellEnvironmentPolicy(withheld)('BOX_CRED')).toBe(true);
    expect(withheld.exclude).toContain('BOX_CRED');
  });

  it('keeps the policy as it is without credentials, and adds a name once', () => {
    const policy = { exclude: ['box_cred'] };
    expect(withCredentialsWithheld(policy, [])).toBe(policy);
    expect(withCredentialsWithheld(policy, ['BOX_CRED']).exclude).toEqual(['box_cred']);
  });
});
