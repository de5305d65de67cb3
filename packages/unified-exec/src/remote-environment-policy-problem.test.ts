import { describe, expect, it } from 'vitest';
import { remoteEnvironmentPolicyProblem } from './remote-environment-policy-problem.js';

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
    const { makeDoor } = await import('../test/test-support.js');
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
