// What the door gives the denial classifier (`nameDenial`) for each wait, and what it does with the
// answer: the classifier is replaced by a recorder here, so the evidence itself is checked.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { NetworkAccessEvent, SandboxPolicy } from '@ux/protocol';
import { createSandboxRegistry } from '@ux/protocol-utils';
import { createUnshareTestSandbox, tempDir, useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { makeDoor, parseReceipt, scriptedReviewer, spawner } from '../test/test-support.js';
import type { DenialEvidence } from './name-denial.js';

const seen = vi.hoisted(() => [] as DenialEvidence[]);
vi.mock('./name-denial.js', () => ({
  nameDenial: (evidence: DenialEvidence) => {
    seen.push(evidence);
    return evidence.proxyRefusals.length > 0
      ? {
          denial: {
            kind: 'proxy',
            message: `refused ${evidence.proxyRefusals[0]!.host}`,
            host: evidence.proxyRefusals[0]!.host,
          },
          nextStep: evidence.canEscalate ? 'escalate' : 'stay inside',
        }
      : undefined;
  },
}));

beforeAll(async () => {
  await warmUpSpawner(spawner);
});
useLeakCheck();

const WORKSPACE_WRITE: SandboxPolicy = {
  type: 'workspace-write',
  writable_roots: [],
  network_access: false,
  exclude_tmpdir_env_var: true,
  exclude_slash_tmp: true,
};

const refusal: NetworkAccessEvent = {
  type: 'network_access',
  host: 'example.com',
  port: 443,
  protocol: 'https',
  decision: 'denied',
  decided_by: 'policy',
  denial: 'not_in_allow_list',
  bytes_up: 0,
  bytes_down: 0,
  duration_ms: 1,
};

function sandboxedDoor(reviewerCanAsk: boolean) {
  const cwd = join(tempDir('ux-evidence-'), 'workspace');
  mkdirSync(cwd);
  return makeDoor({
    orchestrator: {
      sandboxRegistry: createSandboxRegistry({
        // This suite is about the evidence of a wait, not about protected names: the double declares them.
        'unshare-test': createUnshareTestSandbox({
          enforces: ['write_limits', 'protected_names', 'network_off'],
        }),
      }),
      approvalPolicy: 'on-request',
      policy: WORKSPACE_WRITE,
      reviewer: scriptedReviewer({ type: 'approved' }),
    },
    door: { cwd, reviewerCanAsk },
  });
}

describe('the evidence of a wait', () => {
  it('holds the output, exit code, policy, cwd and the proxy refusals of this wait only', async () => {
    seen.length = 0;
    const { door, cwd } = sandboxedDoor(true);
    door.notify({ ...refusal, host: 'before.example' });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const call = door.execCommand(
      { cmd: 'sleep 0.5; echo done', login: false, yield_time_ms: 5000 },
      { callId: 'a' },
    );
    await new Promise((resolve) => setTimeout(resolve, 250));
    door.notify(refusal);
    door.notify({ ...refusal, decision: 'allowed', host: 'allowed.example' });
    const response = await call;
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      output: 'done\n',
      exitCode: 0,
      cwd,
      remote: false,
      earlyDenied: false,
      canEscalate: true,
      proxyRefusals: [refusal],
    });
    expect(seen[0]!.policy.fileSystem.kind).toBe('restricted');
    expect(response.result).toMatchObject({
      status: 'exited',
      sandbox_denied: true,
      denial: { kind: 'proxy', host: 'example.com' },
      next_step: 'escalate',
    });
    expect(parseReceipt(response.text)).toMatchObject({
      denied: 'refused example.com',
      nextStep: 'escalate',
    });
  });

  it('is judged in polls too, and offers no escalation when nobody can be asked', async () => {
    seen.length = 0;
    const { door } = sandboxedDoor(false);
    const started = await door.execCommand(
      { cmd: 'sleep 0.6; echo late', login: false, yield_time_ms: 250 },
      { callId: 'b' },
    );
    expect(started.result.status).toBe('running');
    expect(started.result.sandbox_denied).toBeUndefined();
    const poll = door.writeStdin({ session_id: 1000, yield_time_ms: 5000 }, { callId: 'p' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    door.notify(refusal);
    const polled = await poll;
    expect(seen.at(-1)).toMatchObject({
      output: 'late\n',
      exitCode: 0,
      canEscalate: false,
      proxyRefusals: [refusal],
    });
    expect(polled.result).toMatchObject({
      status: 'exited',
      denial: { kind: 'proxy' },
      next_step: 'stay inside',
    });
  });
});
