import { planTools } from '@ux/features';
import { createOrchestrator } from '@ux/orchestrator';
import {
  type ApprovalPolicy,
  REVIEWER_SPECIFICATION_VERSION,
  type Reviewer,
  SANDBOX_CAPABILITIES,
  SANDBOX_SPECIFICATION_VERSION,
  type SandboxBackend,
  type SandboxPolicy,
  type UxEvent,
} from '@ux/protocol';
import { createSandboxRegistry } from '@ux/protocol-utils';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createUnifiedExec } from './create-unified-exec.js';

// Nothing here may start a process: every command is blocked before its spawn, which throws.
const refusingSpawner = {
  spawn: async () => {
    throw new Error('a blocked command reached the spawner');
  },
};

const WORKSPACE_WRITE: SandboxPolicy = {
  type: 'workspace-write',
  writable_roots: [],
  network_access: false,
  exclude_tmpdir_env_var: true,
  exclude_slash_tmp: true,
};

const missingBackend: SandboxBackend = {
  specificationVersion: SANDBOX_SPECIFICATION_VERSION,
  id: 'missing',
  platforms: [process.platform],
  probe: async () => ({ available: false, reason: 'not installed here', fix: 'install it' }),
  plan: async () => {
    throw new Error('never planned');
  },
};

// Available, but every command in these tests is refused before it would be planned.
const presentBackend: SandboxBackend = {
  ...missingBackend,
  id: 'present',
  probe: async () => ({ available: true, enforces: SANDBOX_CAPABILITIES }),
};

function door(approvalPolicy: ApprovalPolicy, reviewer?: Reviewer) {
  const backend = approvalPolicy === 'never' ? missingBackend : presentBackend;
  const exec = createUnifiedExec({
    orchestrator: createOrchestrator({
      sandboxRegistry: createSandboxRegistry({ [backend.id]: backend }),
      approvalPolicy,
      policy: WORKSPACE_WRITE,
      ...(reviewer ? { reviewer } : {}),
    }),
    spawner: refusingSpawner,
    toolPlan: planTools({
      flags: { shell_tool: true, unified_exec: true, shell_zsh_fork: false, unified_exec_zsh_fork: false },
      platform: 'linux',
    }),
    cwd: '/work/project',
    userShell: '/bin/bash',
    deterministicIds: true,
    shellSnapshotCache: false,
  });
  const events: UxEvent[] = [];
  exec.onEvent((event) => events.push(event));
  onTestFinished(() => exec.shutdown());
  return { exec, events };
}

const commandEvents = (events: UxEvent[]) =>
  events.filter((event) => event.type === 'exec_command_begin' || event.type === 'exec_command_end');

describe('a command blocked before it starts', () => {
  it('begins and ends with the reason when no sandbox can run it', async () => {
    const { exec, events } = door('never');
    const reply = await exec.execCommand({ cmd: 'echo hi' }, { callId: 'c1' });
    expect(reply.result.error?.code).toBe('sandbox_unavailable');
    const [begin, end] = commandEvents(events);
    expect(commandEvents(events)).toHaveLength(2);
    expect(begin).toMatchObject({
      type: 'exec_command_begin',
      call_id: 'c1',
      command: ['/bin/bash', '-lc', 'echo hi'],
      blocked: { status: 'failed', reason: expect.stringContaining('not installed here') },
    });
    expect(end).toMatchObject({
      type: 'exec_command_end',
      call_id: 'c1',
      process_id: (begin as { process_id: string }).process_id,
      exit_code: -1,
      status: 'failed',
      blocked: { status: 'failed', reason: expect.stringContaining('not installed here') },
    });
  });

  it('begins and ends as declined when the reviewer refuses it', async () => {
    const reviewer: Reviewer = {
      specificationVersion: REVIEWER_SPECIFICATION_VERSION,
      id: 'no',
      review: async () => ({ type: 'denied' }),
    };
    const { exec, events } = door('untrusted', reviewer);
    const reply = await exec.execCommand({ cmd: 'touch x' }, { callId: 'c2' });
    expect(reply.result.status).toBe('refused');
    expect(commandEvents(events).map((event) => [event.type, (event as { status?: string }).status])).toEqual(
      [
        ['exec_command_begin', undefined],
        ['exec_command_end', 'declined'],
      ],
    );
    expect(commandEvents(events)[1]).toMatchObject({
      blocked: { status: 'refused', reason: 'rejected by the user' },
    });
  });

  it('is refused, not left waiting, when the policy asks and the door has no reviewer', async () => {
    const { exec, events } = door('untrusted');
    const reply = await exec.shellCommand({ command: 'touch x' }, { callId: 'c3' });
    expect(reply.result.refusal).toMatchObject({ decided_by: 'nobody' });
    expect(reply.result.refusal?.reason).toMatch(/without a reviewer/);
    expect(commandEvents(events).at(-1)).toMatchObject({
      type: 'exec_command_end',
      source: 'shell_command',
      status: 'declined',
      blocked: { status: 'refused' },
    });
  });
});
