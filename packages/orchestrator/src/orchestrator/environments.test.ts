import { InvalidArgumentsError, SandboxUnavailableError } from '@ux/protocol';
import { createSandboxRegistry } from '@ux/protocol-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { fakeBackend, recordingAttempt, recordingReviewer, WORKSPACE_WRITE } from '../../test/fakes.js';
import { type BashParser, loadBashParser } from '../shell/bash-parser.js';
import { createOrchestrator, type OrchestratorRequest } from './create-orchestrator.js';

let bash: BashParser;
beforeAll(async () => {
  bash = await loadBashParser();
});

const request = (script: string, extra: Partial<OrchestratorRequest> = {}): OrchestratorRequest => ({
  callId: 'call-1',
  argv: ['/bin/bash', '-lc', script],
  cwd: '/work/repo',
  tty: false,
  ...extra,
});

/** An orchestrator with only the remote environment `box` and no local backend. */
const boxOnly = (box: ReturnType<typeof fakeBackend>) =>
  createOrchestrator({
    sandboxRegistry: createSandboxRegistry({}),
    environments: { box },
    platform: 'linux',
    approvalPolicy: 'never',
    policy: WORKSPACE_WRITE,
    reviewer: recordingReviewer({ type: 'approved' }),
    bashParser: bash,
  });

describe('remote environments', () => {
  it('sandboxes a remote request with that environment’s backend only, never a local one', async () => {
    const local = fakeBackend('bwrap');
    const box = fakeBackend('exec-server');
    const orchestrator = createOrchestrator({
      sandboxRegistry: createSandboxRegistry({ bwrap: local }),
      environments: { box },
      platform: 'linux',
      approvalPolicy: 'never',
      policy: WORKSPACE_WRITE,
      reviewer: recordingReviewer({ type: 'approved' }),
      bashParser: bash,
    });
    const { attempt, calls } = recordingAttempt(['ok', 'ok']);
    await orchestrator.run(request('make', { environment: 'box' }), attempt);
    await orchestrator.run(request('make'), attempt);
    expect(calls.map((call) => call.sandbox)).toEqual(['exec-server', 'bwrap']);
  });

  it('fails closed when the environment cannot sandbox, naming it, and probes again on the next call', async () => {
    let up = false;
    const box = fakeBackend('exec-server', {
      probe: async () =>
        up
          ? { available: true }
          : { available: false, reason: 'cannot reach box: connection refused', fix: 'start it' },
    });
    const orchestrator = boxOnly(box);
    const { attempt, calls } = recordingAttempt(['ok']);
    const error = await orchestrator.run(request('make', { environment: 'box' }), attempt).catch((e) => e);
    expect(SandboxUnavailableError.isInstance(error)).toBe(true);
    expect(error.message).toBe(
      'sandbox "exec-server" unavailable: environment "box": cannot reach box: connection refused; start it',
    );
    expect(calls).toHaveLength(0);
    up = true;
    await orchestrator.run(request('make', { environment: 'box' }), attempt);
    expect(calls.map((call) => call.sandbox)).toEqual(['exec-server']);
    expect(box.probes).toBe(2);
  });

  it('names the environment once when the probe already names it', async () => {
    const box = fakeBackend('exec-server', {
      probe: async () => ({
        available: false,
        reason: 'cannot reach environment "box": connection refused',
        fix: 'start it',
      }),
    });
    const orchestrator = boxOnly(box);
    const { attempt } = recordingAttempt(['ok']);
    const error = await orchestrator.run(request('make', { environment: 'box' }), attempt).catch((e) => e);
    expect(error.message).toBe(
      'sandbox "exec-server" unavailable: cannot reach environment "box": connection refused; start it',
    );
  });

  it('refuses an environment it has no sandbox for', async () => {
    const orchestrator = boxOnly(fakeBackend('exec-server'));
    const error = await orchestrator
      .run(request('make', { environment: 'bx' }), recordingAttempt([]).attempt)
      .catch((e) => e);
    expect(InvalidArgumentsError.isInstance(error)).toBe(true);
    expect(error.message).toContain('unknown environment "bx"; known remote environments: box');
  });

  it('asks with the environment named, and an approval for the session covers that environment only', async () => {
    const reviewer = recordingReviewer({ type: 'approved_for_session' });
    const orchestrator = createOrchestrator({
      sandboxRegistry: createSandboxRegistry({ bwrap: fakeBackend('bwrap') }),
      environments: { box: fakeBackend('exec-server') },
      platform: 'linux',
      approvalPolicy: 'untrusted',
      policy: WORKSPACE_WRITE,
      reviewer,
      bashParser: bash,
    });
    const { attempt } = recordingAttempt(['ok', 'ok', 'ok']);
    await orchestrator.run(request('make deploy', { environment: 'box' }), attempt);
    await orchestrator.run(request('make deploy', { environment: 'box' }), attempt);
    expect(reviewer.requests).toHaveLength(1);
    expect(reviewer.requests[0]).toMatchObject({ environment_id: 'box', cwd: '/work/repo' });
    await orchestrator.run(request('make deploy'), attempt);
    expect(reviewer.requests).toHaveLength(2);
    expect(reviewer.requests[1]).not.toHaveProperty('environment_id');
  });
});
