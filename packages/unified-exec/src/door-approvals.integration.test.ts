// The approval matrix of docs/reference/door.md §15.3 through the door, with a test sandbox that really restricts
// (mount and network namespaces; root only). The real bubblewrap backend repeats these later.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ApprovalPolicy, SandboxPolicy } from '@ux/protocol';
import { createSandboxRegistry } from '@ux/protocol-utils';
import { createUnshareTestSandbox, tempDir, useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeDoor, ofType, parseReceipt, scriptedReviewer, spawner } from '../test/test-support.js';

beforeAll(async () => {
  await warmUpSpawner(spawner);
});
useLeakCheck();

const ctx = (callId = 'call-1') => ({ callId });
const RETRY_REASON = 'command failed; retry without sandbox?';

function sandboxedDoor(
  approvalPolicy: ApprovalPolicy,
  policy: SandboxPolicy,
  ...answers: Parameters<typeof scriptedReviewer>
) {
  // Every command given to this door ends at once: a wide early-exit window keeps a loaded machine's
  // slow start from turning a fast denial into a late one.
  return sandboxedDoorWithWindow(5_000, approvalPolicy, policy, ...answers);
}

function sandboxedDoorWithWindow(
  earlyExitWindowMs: number | undefined,
  approvalPolicy: ApprovalPolicy,
  policy: SandboxPolicy,
  ...answers: Parameters<typeof scriptedReviewer>
) {
  const reviewer = scriptedReviewer(...answers);
  const root = tempDir('ux-approvals-');
  const cwd = join(root, 'workspace');
  const outside = join(root, 'outside');
  mkdirSync(cwd);
  mkdirSync(outside);
  const made = makeDoor({
    orchestrator: {
      sandboxRegistry: createSandboxRegistry({
        // This suite is about approvals and retries after a denial, not about protected names: the
        // double declares them so workspace-write policies may run on it.
        'unshare-test': createUnshareTestSandbox({
          enforces: ['write_limits', 'protected_names', 'network_off'],
        }),
      }),
      approvalPolicy,
      policy,
      reviewer,
    },
    door: { cwd, ...(earlyExitWindowMs === undefined ? {} : { earlyExitWindowMs }) },
  });
  return { ...made, reviewer, outside };
}

const WORKSPACE_WRITE: SandboxPolicy = {
  type: 'workspace-write',
  writable_roots: [],
  network_access: false,
  exclude_tmpdir_env_var: true,
  exclude_slash_tmp: true,
};

describe('approvals without a sandbox', () => {
  it('on-request + danger-full-access runs without a prompt', async () => {
    const { door, reviewer } = makeDoor({ orchestrator: { approvalPolicy: 'on-request' } });
    const receipt = parseReceipt((await door.execCommand({ cmd: 'echo "hello unified exec"' }, ctx())).text);
    expect(receipt).toMatchObject({ exitCode: 0, output: 'hello unified exec\n' });
    expect(reviewer.requests).toEqual([]);
  });

  it('untrusted asks before git reset --hard; a denial reaches the model and nothing runs', async () => {
    const reviewer = scriptedReviewer({ type: 'denied' });
    const { door, events } = makeDoor({ orchestrator: { approvalPolicy: 'untrusted', reviewer } });
    const response = await door.execCommand({ cmd: 'git reset --hard' }, ctx());
    expect(response.success).toBe(false);
    expect(response.text).toContain('rejected by the user');
    expect(reviewer.requests).toHaveLength(1);
    expect(reviewer.requests[0]).toMatchObject({
      call_id: 'call-1',
      command: ['/bin/bash', '-lc', 'git reset --hard'],
      retry: false,
    });
    expect(ofType(events, 'exec_command_begin')).toMatchObject([
      { sandbox: 'none', blocked: { status: 'refused' } },
    ]);
  });

  it('an abort answer asks the host to interrupt the turn', async () => {
    const reviewer = scriptedReviewer({ type: 'abort' });
    const { door } = makeDoor({ orchestrator: { approvalPolicy: 'untrusted', reviewer } });
    expect(await door.execCommand({ cmd: 'git push' }, ctx())).toMatchObject({
      success: false,
      interruptTurn: true,
    });
  });

  it('fails closed when the policy needs a sandbox and none is registered', async () => {
    const { door, events } = makeDoor({
      orchestrator: { approvalPolicy: 'never', policy: { type: 'read-only', network_access: false } },
    });
    const response = await door.execCommand({ cmd: 'echo hi' }, ctx());
    expect(response.success).toBe(false);
    expect(response.text).toMatch(/^Failed `echo hi`: sandbox unavailable: /);
    expect(ofType(events, 'exec_command_begin')).toMatchObject([
      { sandbox: 'none', blocked: { status: 'failed' } },
    ]);
  });
});

// login: false keeps this machine's login profile (which writes to $HOME) out of the sandboxed runs.
describe('approvals with a sandbox that restricts', () => {
  it('runs a plain command inside the sandbox (read-only, never)', async () => {
    const { door, events, reviewer } = sandboxedDoor('never', { type: 'read-only', network_access: false });
    expect(
      parseReceipt((await door.execCommand({ cmd: "echo 'hello'", login: false }, ctx())).text),
    ).toMatchObject({ exitCode: 0, output: 'hello\n' });
    expect(ofType(events, 'exec_command_begin')[0]!.sandbox).toBe('unshare-test');
    expect(reviewer.requests).toEqual([]);
  });

  it('on-request + read-only: an approved escalation runs outside the sandbox, asked with the justification', async () => {
    const { door, events, reviewer, cwd } = sandboxedDoor(
      'on-request',
      { type: 'read-only', network_access: false },
      { type: 'approved' },
    );
    const justification = 'Requires escalated permissions to bypass the sandbox in tests.';
    const receipt = parseReceipt(
      (
        await door.execCommand(
          {
            cmd: 'touch escalated.txt && echo written',
            login: false,
            sandbox_permissions: 'require_escalated',
            justification,
          },
          ctx(),
        )
      ).text,
    );
    expect(receipt).toMatchObject({ exitCode: 0, output: 'written\n' });
    expect(reviewer.requests[0]!.reason).toBe(justification);
    expect(existsSync(join(cwd, 'escalated.txt'))).toBe(true);
    expect(ofType(events, 'exec_command_begin')[0]!.sandbox).toBe('none');
  });

  it('on-failure: a fast denial asks to retry without the sandbox, and the retry writes the file', async () => {
    const { door, events, reviewer, outside } = sandboxedDoor('on-failure', WORKSPACE_WRITE, {
      type: 'approved',
    });
    const target = join(outside, 'install-marker');
    const receipt = parseReceipt(
      (await door.execCommand({ cmd: `touch ${target} && echo installed`, login: false }, ctx())).text,
    );
    expect(receipt).toMatchObject({
      exitCode: 0,
      output: 'installed\n',
      sandbox: ['the sandbox blocked the first run; as approved, it ran again WITHOUT the sandbox'],
    });
    expect(existsSync(target)).toBe(true);
    expect(reviewer.requests).toHaveLength(1);
    expect(reviewer.requests[0]).toMatchObject({ reason: RETRY_REASON, retry: true });
    expect(ofType(events, 'exec_command_begin').map((event) => event.sandbox)).toEqual(['none']);
  });

  it('never: a fast denial comes back as an ordinary receipt, with no prompt, its begin and end, nothing written', async () => {
    const { door, events, reviewer, outside } = sandboxedDoor('never', WORKSPACE_WRITE);
    const target = join(outside, 'install-marker');
    const response = await door.execCommand({ cmd: `touch ${target}`, login: false }, ctx());
    expect(response.success).toBe(true);
    const receipt = parseReceipt(response.text);
    expect(receipt.exitCode).toBe(1);
    expect(receipt.sessionId).toBeUndefined();
    // From the call's start: the early-exit window and the sandbox's set-up count.
    expect(receipt.wallTime).toBeGreaterThan(0);
    expect(receipt.output).toMatch(/read-only file system/i);
    // Named where the model reads it, in both renderings; under never, escalation is not offered.
    expect(response.result).toMatchObject({
      status: 'exited',
      command: `touch ${target}`,
      sandbox_denied: true,
      denial: { kind: 'file_write' },
    });
    expect(receipt.denied).toBe(response.result.denial?.message);
    expect(receipt.nextStep).toBe(response.result.next_step);
    expect(response.result.next_step).not.toContain('require_escalated');
    expect(existsSync(target)).toBe(false);
    expect(reviewer.requests).toEqual([]);
    expect(events.map((event) => event.type)).toEqual(['exec_command_begin', 'exec_command_end']);
  });

  it('a late denial is an ordinary receipt: no retry, no prompt, no session', async () => {
    const { door, events, reviewer, outside } = sandboxedDoorWithWindow(
      undefined,
      'on-failure',
      WORKSPACE_WRITE,
      {
        type: 'approved',
      },
    );
    const target = join(outside, 'late-marker');
    const receipt = parseReceipt(
      (
        await door.execCommand(
          { cmd: `sleep 0.4; touch ${target}`, login: false, yield_time_ms: 3000 },
          ctx(),
        )
      ).text,
    );
    expect(receipt.exitCode).toBe(1);
    expect(receipt.sessionId).toBeUndefined();
    expect(receipt.output).toMatch(/read-only file system/i);
    expect(existsSync(target)).toBe(false);
    expect(reviewer.requests).toEqual([]);
    expect(ofType(events, 'exec_command_begin')).toHaveLength(1);
  });
});
