import { copyFileSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ApprovalRequest, ReviewDecision } from '@ux/protocol';
import { createSandboxRegistry } from '@ux/protocol-utils';
import { tempDir } from '@ux/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { DENY_READ, fakeBackend, recordingReviewer, WORKSPACE_WRITE } from '../../test/fakes.js';
import { NEVER_PROMPT_REASON } from '../policy/approval-requirement.js';
import { createExecPolicy } from '../policy/exec-policy.js';
import { parseRulesFile } from '../policy/parse-rules-file.js';
import { type BashParser, loadBashParser } from '../shell/bash-parser.js';
import type { SelectedSandbox } from './attempt.js';
import { createOrchestrator, type OrchestratorSettings } from './create-orchestrator.js';
import type { ExecDecision, ExecDecisionRequest } from './decide-exec.js';

/** The decision without the directory it pinned (released), after checking that this is `cwd`'s. */
function unpinned(decision: ExecDecision): ExecDecision {
  if (decision.action !== 'escalate' || !decision.cwdPin) return decision;
  const { cwdPin, ...rest } = decision;
  const stat = statSync(rest.cwd, { bigint: true });
  expect(cwdPin.identity).toEqual({ dev: `${stat.dev}`, ino: `${stat.ino}` });
  expect(cwdPin.path).toBe(rest.cwd);
  cwdPin.release();
  return rest;
}

let bash: BashParser;
beforeAll(async () => {
  bash = await loadBashParser();
});

const TOUCH = '/usr/bin/touch';
const RM = '/usr/bin/rm';
const backend = fakeBackend('fake');
const sandboxed: SelectedSandbox = { backend, policy: WORKSPACE_WRITE };

function setup(rules: string, overrides: Partial<OrchestratorSettings> = {}, answer?: ReviewDecision) {
  const reviewer = recordingReviewer(answer ?? { type: 'approved' });
  const events: ApprovalRequest[] = [];
  let next = 0;
  const orchestrator = createOrchestrator({
    sandboxRegistry: createSandboxRegistry({ fake: backend }),
    platform: 'linux',
    approvalPolicy: 'on-request',
    policy: WORKSPACE_WRITE,
    reviewer,
    bashParser: bash,
    execPolicy: createExecPolicy(parseRulesFile(rules, 'test.rules')),
    newApprovalId: () => `approval-${++next}`,
    // The session starts after every file the test made: they all predate it unless a test says otherwise.
    sessionStartMs: Date.now() + 60_000,
    ...overrides,
  });
  orchestrator.onApprovalRequest((request) => events.push(request));
  return { orchestrator, reviewer, events };
}

function exec(file: string, argv: string[], extra: Partial<ExecDecisionRequest> = {}): ExecDecisionRequest {
  const cwd = extra.cwd ?? tempDir('ux-decide-exec-');
  return {
    callId: 'call-1',
    file,
    argv,
    cwd,
    parent: { sandbox: sandboxed, projectRoot: cwd, env: { PATH: '/usr/bin:/bin', HOME: cwd } },
    ...extra,
  };
}

describe('decideExec: the per-exec decision table (docs/reference/zsh-fork.md §4)', () => {
  it('denies an exec a forbidden rule matches by its file name, naming the rule', async () => {
    const { orchestrator, reviewer } = setup('prefix_rule(pattern=["rm"], decision="forbidden")\n');
    const decision = await orchestrator.decideExec(exec(RM, ['rm', '-f', 'x']));
    expect(decision).toEqual({
      action: 'deny',
      reason:
        'Execution forbidden by policy: `/usr/bin/rm -f x` rejected: policy forbids commands starting with `/usr/bin/rm`',
    });
    expect(reviewer.requests).toEqual([]);
  });

  it('escalates an exec an allow rule vouches for, out of the sandbox, without asking', async () => {
    const { orchestrator, reviewer } = setup('prefix_rule(pattern=["touch"], decision="allow")\n');
    const decision = await orchestrator.decideExec(exec(TOUCH, ['touch', '/tmp/outside']));
    expect(decision).toMatchObject({ action: 'escalate', sandbox: null, program: TOUCH });
    expect(reviewer.requests).toEqual([]);
  });

  it('runs an unmatched exec in place, inside the sandbox', async () => {
    const { orchestrator } = setup('prefix_rule(pattern=["touch"], decision="allow")\n');
    expect(await orchestrator.decideExec(exec('/bin/echo', ['echo', 'hi']))).toEqual({
      action: 'run',
      cacheable: true,
    });
  });

  it('keeps the sandbox under deny-read: an allowed exec runs in place', async () => {
    const { orchestrator } = setup('prefix_rule(pattern=["touch"], decision="allow")\n', {
      policy: DENY_READ,
    });
    const decision = await orchestrator.decideExec({
      ...exec(TOUCH, ['touch', 'x']),
      parent: { sandbox: { backend, policy: DENY_READ }, projectRoot: '/', env: { PATH: '/usr/bin:/bin' } },
    });
    expect(decision).toEqual({ action: 'run' });
  });

  it('does not escalate a program the sandboxed command could have written', async () => {
    const { orchestrator } = setup('prefix_rule(pattern=["touch"], decision="allow")\n');
    const cwd = tempDir('ux-decide-exec-');
    mkdirSync(join(cwd, 'bin'));
    copyFileSync(TOUCH, join(cwd, 'bin', 'touch'));
    const built = await orchestrator.decideExec(exec('./bin/touch', ['touch', '/tmp/x'], { cwd }));
    expect(built).toEqual({
      action: 'run',
      inPlace: `${join(cwd, 'bin', 'touch')} lies in ${cwd}, which the sandbox can write`,
    });
  });

  it('asks for each prompted exec with its own approval id, offering approve or abort only', async () => {
    const { orchestrator, reviewer, events } = setup(
      'prefix_rule(pattern=["touch"], decision="prompt", justification="touch is watched")\n',
    );
    const cwd = tempDir('ux-decide-exec-');
    const first = unpinned(await orchestrator.decideExec(exec(TOUCH, ['touch', 'a'], { cwd })));
    const second = unpinned(await orchestrator.decideExec(exec(TOUCH, ['touch', 'b'], { cwd })));
    expect(first).toMatchObject({ action: 'escalate', sandbox: null, program: TOUCH });
    expect(second).toEqual(first);
    expect(reviewer.requests.map((request) => request.approval_id)).toEqual(['approval-1', 'approval-2']);
    expect(reviewer.requests[0]).toMatchObject({
      call_id: 'call-1',
      command: [TOUCH, 'a'],
      display_command: 'touch a',
      available_decisions: ['approved', 'abort'],
      unsandboxed: 'now',
      policy_reason: '`/usr/bin/touch a` requires approval: touch is watched (a program the command runs)',
    });
    expect(events.map((event) => event.approval_id)).toEqual(['approval-1', 'approval-2']);
  });

  it("names the parent command in the question: a shell's script as typed, else its quoted argv", async () => {
    const { orchestrator, reviewer } = setup('prefix_rule(pattern=["touch"], decision="prompt")\n');
    const cwd = tempDir('ux-decide-exec-');
    const withParent = (argv: string[]) => {
      const request = exec(TOUCH, ['touch', 'a'], { cwd });
      return { ...request, parent: { ...request.parent, argv } };
    };
    await orchestrator.decideExec(withParent(['/bin/zsh', '-c', 'echo a; touch a']));
    await orchestrator.decideExec(withParent(['make', 'it so']));
    await orchestrator.decideExec(exec(TOUCH, ['touch', 'a'], { cwd }));
    expect(reviewer.requests.map((request) => request.parent_command)).toEqual([
      'echo a; touch a',
      "make 'it so'",
      undefined,
    ]);
  });

  it('abort denies the exec and says the turn must stop; a refusal denies it', async () => {
    const rules = 'prefix_rule(pattern=["touch"], decision="prompt")\n';
    const aborted = setup(rules, {}, { type: 'abort' });
    expect(await aborted.orchestrator.decideExec(exec(TOUCH, ['touch', 'a']))).toEqual({
      action: 'deny',
      reason: 'aborted by the user',
      aborted: true,
    });
    const refused = setup(rules, {}, { type: 'denied' });
    // Only approve and abort are offered: any other answer denies the exec.
    expect(await refused.orchestrator.decideExec(exec(TOUCH, ['touch', 'a']))).toEqual({
      action: 'deny',
      reason: 'rejected by the user (the answer "denied" was not offered; offered: approved, abort)',
    });
  });

  it('under never a prompt becomes a denial, and nobody is asked', async () => {
    const { orchestrator, reviewer } = setup('prefix_rule(pattern=["touch"], decision="prompt")\n', {
      approvalPolicy: 'never',
    });
    expect(await orchestrator.decideExec(exec(TOUCH, ['touch', 'a']))).toEqual({
      action: 'deny',
      reason: `Execution forbidden by policy: ${NEVER_PROMPT_REASON}`,
    });
    expect(reviewer.requests).toEqual([]);
  });

  it('lets an unknown program fail by itself: no prompt, no rule', async () => {
    const { orchestrator, reviewer } = setup('prefix_rule(pattern=["nosuch"], decision="prompt")\n', {
      approvalPolicy: 'untrusted',
    });
    expect(await orchestrator.decideExec(exec('/usr/bin/nosuch-ux', ['nosuch-ux']))).toEqual({
      action: 'run',
    });
    expect(reviewer.requests).toEqual([]);
  });

  it('under untrusted asks about programs not known to be read-only, not about ls', async () => {
    const { orchestrator, reviewer } = setup('', { approvalPolicy: 'untrusted' });
    expect(await orchestrator.decideExec(exec('/bin/ls', ['ls', '-la']))).toEqual({
      action: 'run',
      cacheable: true,
    });
    expect(reviewer.requests).toHaveLength(0);
    expect(await orchestrator.decideExec(exec(TOUCH, ['touch', 'x']))).toEqual({ action: 'run' });
    expect(reviewer.requests).toHaveLength(1);
    expect(reviewer.requests[0]!.unsandboxed).toBe('never');
  });

  it('runs everything in place when the command itself runs unsandboxed', async () => {
    const { orchestrator } = setup('prefix_rule(pattern=["touch"], decision="allow")\n');
    const decision = await orchestrator.decideExec({
      ...exec(TOUCH, ['touch', 'x']),
      parent: { sandbox: null, projectRoot: '/', env: { PATH: '/usr/bin:/bin' } },
    });
    expect(decision).toEqual({ action: 'run' });
  });

  it('a host_executable list keeps an allow rule to the paths it names', async () => {
    const { orchestrator } = setup(
      'host_executable(name="touch", paths=["/opt/touch"])\nprefix_rule(pattern=["touch"], decision="allow")\n',
    );
    expect(await orchestrator.decideExec(exec(TOUCH, ['touch', 'x']))).toEqual({
      action: 'run',
      cacheable: true,
    });
  });
});
