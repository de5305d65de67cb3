// apply_patch through the door with the real sandbox's policy: workspace patches apply without a
// question, a path outside is asked about, protected paths are refused, and a bad hunk changes nothing.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planTools } from '@ux/features';
import { createOrchestrator } from '@ux/orchestrator';
import {
  type ApprovalRequest,
  REVIEWER_SPECIFICATION_VERSION,
  type ReviewDecision,
  type UxEvent,
} from '@ux/protocol';
import { createSandboxRegistry } from '@ux/protocol-utils';
import { createBwrapSandbox } from '@ux/sandbox-bwrap';
import { createLocalSpawner } from '@ux/spawn';
import { useLeakCheck } from '@ux/test-utils';
import { createUnifiedExec } from '@ux/unified-exec';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';

const backend = createBwrapSandbox();
let root: string;
beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'ux-door-patch-')));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));
useLeakCheck();
afterAll(() => backend.close());

function door(answer: ReviewDecision = { type: 'approved' }) {
  const name = `case-${Math.random().toString(36).slice(2, 8)}`;
  const cwd = join(root, name, 'workspace');
  // A HOME of its own, empty: no start-up file of this machine runs in these shells.
  const home = join(root, name, 'home');
  mkdirSync(home, { recursive: true });
  mkdirSync(join(cwd, '.git'), { recursive: true });
  writeFileSync(join(cwd, '.git', 'config'), '[core]\n\tbare = false\n');
  const prompts: ApprovalRequest[] = [];
  const exec = createUnifiedExec({
    orchestrator: createOrchestrator({
      sandboxRegistry: createSandboxRegistry({ bwrap: backend }),
      approvalPolicy: 'on-request',
      policy: {
        type: 'workspace-write',
        writable_roots: [],
        network_access: false,
        exclude_slash_tmp: true,
        exclude_tmpdir_env_var: true,
      },
      reviewer: {
        specificationVersion: REVIEWER_SPECIFICATION_VERSION,
        id: 'scripted',
        review: async (request) => {
          prompts.push(request);
          return answer;
        },
      },
    }),
    spawner: createLocalSpawner(),
    toolPlan: planTools({
      flags: { shell_tool: true, unified_exec: true, shell_zsh_fork: false, unified_exec_zsh_fork: false },
      platform: 'linux',
    }),
    cwd,
    userShell: '/bin/bash',
    baseEnvironment: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home },
  });
  const events: UxEvent[] = [];
  exec.onEvent((event) => events.push(event));
  onTestFinished(() => exec.shutdown());
  return { exec, cwd, prompts, events };
}

const heredoc = (patch: string) => `apply_patch <<'EOF'\n*** Begin Patch\n${patch}*** End Patch\nEOF\n`;
const ctx = { callId: 'call-1' };

describe('apply_patch through the door', () => {
  it('applies a workspace-only patch without a question, and emits patch events instead of exec events', async () => {
    const { exec, cwd, prompts, events } = door();
    writeFileSync(join(cwd, 'greet.txt'), 'hello\nworld\n');
    const response = await exec.execCommand(
      {
        cmd: heredoc(
          '*** Add File: new.txt\n+fresh\n*** Update File: greet.txt\n@@\n hello\n-world\n+there\n',
        ),
      },
      ctx,
    );
    expect(response.result).toMatchObject({
      status: 'exited',
      exit_code: 0,
      output: 'Success. Updated the following files:\nA new.txt\nM greet.txt\n',
    });
    expect(response.text).toMatch(
      /^Chunk ID: [0-9a-f]{6}\nWall time: \d+\.\d{4} seconds\nProcess exited with code 0\nOriginal token count: \d+\nOutput:\nSuccess\. Updated the following files:\nA new\.txt\nM greet\.txt\n$/,
    );
    expect(readFileSync(join(cwd, 'new.txt'), 'utf8')).toBe('fresh\n');
    expect(readFileSync(join(cwd, 'greet.txt'), 'utf8')).toBe('hello\nthere\n');
    expect(prompts).toEqual([]);
    expect(events.map((event) => event.type)).toEqual(['patch_apply_begin', 'patch_apply_end']);
    expect(events[0]).toMatchObject({ auto_approved: true });
  });

  it('asks about a path outside the workspace: approved, writes it; denied, writes nothing', async () => {
    const approved = door();
    const patch = heredoc('*** Add File: ../outside.txt\n+out\n');
    const yes = await approved.exec.execCommand({ cmd: patch }, ctx);
    expect(yes.success).toBe(true);
    expect(approved.prompts).toHaveLength(1);
    expect(approved.prompts[0]!.policy_reason).toContain('outside the writable roots');
    expect(readFileSync(join(approved.cwd, '..', 'outside.txt'), 'utf8')).toBe('out\n');

    const denied = door({ type: 'denied' });
    const no = await denied.exec.execCommand({ cmd: patch }, ctx);
    expect(no).toMatchObject({
      success: false,
      result: {
        status: 'refused',
        command: patch,
        refusal: { decided_by: 'person', reason: 'apply_patch rejected: rejected by the user' },
      },
    });
    expect(existsSync(join(denied.cwd, '..', 'outside.txt'))).toBe(false);
  });

  it('refuses a patch to .git/config, whatever a reviewer would say', async () => {
    const { exec, cwd, prompts } = door();
    const response = await exec.execCommand(
      { cmd: heredoc('*** Update File: .git/config\n@@\n [core]\n-\tbare = false\n+\tfsmonitor = evil\n') },
      ctx,
    );
    expect(response.success).toBe(false);
    expect(response.result).toMatchObject({ status: 'refused', refusal: { decided_by: 'policy' } });
    expect(response.result.refusal?.reason).toMatch(/^apply_patch rejected: .*\.git\/config is protected \(/);
    expect(readFileSync(join(cwd, '.git', 'config'), 'utf8')).toBe('[core]\n\tbare = false\n');
    expect(prompts).toEqual([]);
  });

  it('changes no file at all when one hunk does not apply', async () => {
    const { exec, cwd, events } = door();
    writeFileSync(join(cwd, 'a.txt'), 'one\n');
    writeFileSync(join(cwd, 'b.txt'), 'two\n');
    const response = await exec.execCommand(
      {
        cmd: heredoc('*** Update File: a.txt\n@@\n-one\n+ONE\n*** Update File: b.txt\n@@\n-not there\n+x\n'),
      },
      ctx,
    );
    expect(response.success).toBe(false);
    expect(response.text).toContain('b.txt');
    expect(response.result).toMatchObject({ status: 'exited', exit_code: 1 });
    expect(readFileSync(join(cwd, 'a.txt'), 'utf8')).toBe('one\n');
    expect(events).toEqual([]);
  });

  it('works through shell_command too, with cd DIR &&', async () => {
    const { exec, cwd } = door();
    mkdirSync(join(cwd, 'sub'));
    const plan = planTools({
      flags: { shell_tool: true, unified_exec: false, shell_zsh_fork: false, unified_exec_zsh_fork: false },
      platform: 'linux',
    });
    expect(plan.tools).toEqual(['shell_command']);
    const response = await exec.shellCommand(
      { command: `cd sub && ${heredoc('*** Add File: x.txt\n+x\n')}` },
      ctx,
    );
    expect(response.success).toBe(true);
    expect(readFileSync(join(cwd, 'sub', 'x.txt'), 'utf8')).toBe('x\n');
  });
});
