// decideExec on real files: which program file a rule vouches for, programs the sandbox wrote, and
// working directories whose configuration it wrote (docs/zsh-fork.md, "Escalation and the sandbox's files").
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ReviewDecision } from '@ux/protocol';
import { createSandboxRegistry } from '@ux/protocol-utils';
import { tempDir } from '@ux/test-utils';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { fakeBackend, recordingReviewer, WORKSPACE_WRITE } from '../../test/fakes.js';
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

const GIT = '/usr/bin/git';
const TOUCH = '/usr/bin/touch';
const PATH = '/usr/bin:/bin';
const backend = fakeBackend('fake');
const sandboxed: SelectedSandbox = { backend, policy: WORKSPACE_WRITE };
const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };

/** A directory outside /tmp and $TMPDIR (which never escalate): /var/tmp, which the test policy does not let the sandbox write. */
function outsideDir(): string {
  const dir = realpathSync(mkdtempSync('/var/tmp/ux-decide-trust-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function setup(
  rules: string,
  overrides: Partial<OrchestratorSettings> = {},
  answers: ReviewDecision | ReviewDecision[] = { type: 'approved' },
) {
  const reviewer = recordingReviewer(answers);
  const orchestrator = createOrchestrator({
    sandboxRegistry: createSandboxRegistry({ fake: backend }),
    platform: 'linux',
    approvalPolicy: 'on-request',
    policy: WORKSPACE_WRITE,
    reviewer,
    bashParser: bash,
    execPolicy: createExecPolicy(parseRulesFile(rules, 'test.rules')),
    newApprovalId: () => 'approval-1',
    sessionStartMs: Date.now() + 60_000,
    ...overrides,
  });
  return { orchestrator, reviewer };
}

function exec(
  file: string,
  argv: string[],
  cwd: string,
  parent: Partial<ExecDecisionRequest['parent']> = {},
): ExecDecisionRequest {
  return {
    callId: 'call-1',
    file,
    argv,
    cwd,
    parent: { sandbox: sandboxed, projectRoot: cwd, env: { PATH, HOME: cwd }, ...parent },
  };
}

const GIT_STATUS = 'prefix_rule(pattern=["git", "status"], decision="allow")\n';

describe('a bare-name rule vouches for the file the session’s PATH finds', () => {
  it('escalates /usr/bin/git; keeps a copy elsewhere in the sandbox, saying which git the rule means', async () => {
    const { orchestrator } = setup(GIT_STATUS);
    const cwd = outsideDir();
    const other = outsideDir();
    copyFileSync(GIT, join(other, 'git'));
    expect(unpinned(await orchestrator.decideExec(exec(GIT, ['git', 'status'], cwd)))).toEqual({
      action: 'escalate',
      sandbox: null,
      program: GIT,
      cwd,
    });
    expect(await orchestrator.decideExec(exec(join(other, 'git'), ['git', 'status'], cwd))).toEqual({
      action: 'run',
      inPlace: `the rule for \`git\` vouches only for ${GIT}, the git the session's PATH finds, not for ${join(other, 'git')}`,
    });
  });

  it('follows the session’s PATH, not the shell’s: with that directory first, the copy is the rule’s git', async () => {
    const { orchestrator } = setup(GIT_STATUS);
    const cwd = outsideDir();
    const other = outsideDir();
    copyFileSync(GIT, join(other, 'git'));
    const decision = await orchestrator.decideExec(
      exec(join(other, 'git'), ['git', 'status'], cwd, { env: { PATH: `${other}:${PATH}`, HOME: cwd } }),
    );
    expect(decision).toMatchObject({ action: 'escalate', program: join(other, 'git') });
  });

  it('keeps absolute-path rules and host_executable declarations working', async () => {
    const other = outsideDir();
    copyFileSync(GIT, join(other, 'git'));
    const cwd = outsideDir();
    const absolute = setup(`prefix_rule(pattern=["${join(other, 'git')}", "status"], decision="allow")\n`);
    expect(
      await absolute.orchestrator.decideExec(exec(join(other, 'git'), ['git', 'status'], cwd)),
    ).toMatchObject({ action: 'escalate', program: join(other, 'git') });
    const declared = setup(`host_executable(name="git", paths=["${join(other, 'git')}"])\n${GIT_STATUS}`);
    expect(
      await declared.orchestrator.decideExec(exec(join(other, 'git'), ['git', 'status'], cwd)),
    ).toMatchObject({ action: 'escalate', program: join(other, 'git') });
  });

  it('still applies prompt and forbidden rules by name to any file', async () => {
    const other = outsideDir();
    copyFileSync(GIT, join(other, 'git'));
    const { orchestrator } = setup('prefix_rule(pattern=["git", "push"], decision="forbidden")\n');
    expect(
      await orchestrator.decideExec(exec(join(other, 'git'), ['git', 'push'], outsideDir())),
    ).toMatchObject({
      action: 'deny',
    });
  });
});

describe('programs the sandbox could write or did write never run outside', () => {
  it('a program in the command’s $TMPDIR (as the intercepted shell names it)', async () => {
    const { orchestrator } = setup('prefix_rule(pattern=["touch"], decision="allow")\n');
    const tmp = outsideDir();
    copyFileSync(TOUCH, join(tmp, 'touch'));
    const request = {
      ...exec(join(tmp, 'touch'), ['touch', 'x'], outsideDir(), { env: { PATH: `${tmp}:${PATH}` } }),
      env: { TMPDIR: tmp },
    };
    expect(await orchestrator.decideExec(request)).toEqual({
      action: 'run',
      inPlace: `${join(tmp, 'touch')} lies in ${tmp}, a temporary directory the sandbox can write`,
    });
  });

  it('a program in a --writable-root, from a shell that left the workspace', async () => {
    const root = outsideDir();
    const policy = {
      ...WORKSPACE_WRITE,
      fileSystem: {
        kind: 'restricted' as const,
        entries: [
          ...(WORKSPACE_WRITE.fileSystem.kind === 'restricted' ? WORKSPACE_WRITE.fileSystem.entries : []),
          { path: { type: 'path' as const, path: root }, access: 'write' as const },
        ],
      },
    };
    const { orchestrator } = setup('prefix_rule(pattern=["touch"], decision="allow")\n', { policy });
    copyFileSync(TOUCH, join(root, 'touch'));
    const decision = await orchestrator.decideExec(
      exec(join(root, 'touch'), ['touch', 'x'], '/usr', {
        sandbox: { backend, policy },
        projectRoot: outsideDir(),
        env: { PATH: `${root}:${PATH}` },
      }),
    );
    expect(decision).toEqual({
      action: 'run',
      inPlace: `${join(root, 'touch')} lies in ${root}, which the sandbox can write`,
    });
  });

  it('a program outside every writable root created during the session', async () => {
    const dir = outsideDir();
    const { orchestrator } = setup('prefix_rule(pattern=["touch"], decision="allow")\n', {
      sessionStartMs: Date.now() - 60_000,
    });
    copyFileSync(TOUCH, join(dir, 'touch'));
    const decision = await orchestrator.decideExec(
      exec(join(dir, 'touch'), ['touch', 'x'], '/usr', {
        projectRoot: outsideDir(),
        env: { PATH: `${dir}:${PATH}` },
      }),
    );
    expect(decision).toEqual({
      action: 'run',
      inPlace: `${join(dir, 'touch')} was created or changed during this session`,
    });
  });
});

describe('a working directory whose configuration the sandbox wrote', () => {
  /** A workspace whose repository git init made during the session (`git init && git status`). */
  function plantedRepository(): string {
    const ws = outsideDir();
    execFileSync('git', ['init', '-q', 'evil'], { cwd: ws, env: GIT_ENV });
    return join(ws, 'evil');
  }

  it('keeps an allowed git status in place, saying why', async () => {
    const { orchestrator, reviewer } = setup(GIT_STATUS, { sessionStartMs: Date.now() - 60_000 });
    const evil = plantedRepository();
    const decision = await orchestrator.decideExec(
      exec(GIT, ['git', 'status'], evil, { projectRoot: join(evil, '..') }),
    );
    expect(decision).toEqual({
      action: 'run',
      inPlace: `the working directory ${evil} was created during this session`,
    });
    expect(reviewer.requests).toEqual([]);
  });

  it('asks when the command asked for escalation and a rule allows it; approved → outside, denied → in place, never → in place unasked', async () => {
    const sessionStartMs = Date.now() - 60_000;
    const evil = plantedRepository();
    const request = exec(GIT, ['git', 'status'], evil, {
      projectRoot: join(evil, '..'),
      sandboxPermissions: 'require_escalated',
    });

    const approving = setup(GIT_STATUS, { sessionStartMs });
    expect(unpinned(await approving.orchestrator.decideExec(request))).toEqual({
      action: 'escalate',
      sandbox: null,
      program: GIT,
      cwd: evil,
    });
    expect(approving.reviewer.requests).toHaveLength(1);
    expect(approving.reviewer.requests[0]).toMatchObject({
      available_decisions: ['approved', 'denied', 'abort'],
      unsandboxed: 'now',
      display_command: 'git status',
      policy_reason: expect.stringContaining(
        `the command asked to run outside the sandbox, but the working directory ${evil} was created during this session`,
      ),
    });

    const denying = setup(GIT_STATUS, { sessionStartMs }, { type: 'denied' });
    expect(await denying.orchestrator.decideExec(request)).toEqual({
      action: 'run',
      inPlace: `the working directory ${evil} was created during this session (not approved to run outside: rejected by the user)`,
    });

    const never = setup(GIT_STATUS, { sessionStartMs, approvalPolicy: 'never' });
    expect(await never.orchestrator.decideExec(request)).toEqual({
      action: 'run',
      inPlace: `the working directory ${evil} was created during this session`,
    });
    expect(never.reviewer.requests).toEqual([]);

    const aborting = setup(GIT_STATUS, { sessionStartMs }, { type: 'abort' });
    expect(await aborting.orchestrator.decideExec(request)).toEqual({
      action: 'deny',
      reason: 'aborted by the user',
      aborted: true,
    });
  });

  it('a prompted exec’s question carries the warning, and one approval is enough', async () => {
    const evil = plantedRepository();
    const { orchestrator, reviewer } = setup('prefix_rule(pattern=["git", "status"], decision="prompt")\n', {
      sessionStartMs: Date.now() - 60_000,
    });
    const decision = await orchestrator.decideExec(
      exec(GIT, ['git', 'status'], evil, {
        projectRoot: join(evil, '..'),
        sandboxPermissions: 'require_escalated',
      }),
    );
    expect(decision).toMatchObject({ action: 'escalate', program: GIT });
    expect(reviewer.requests).toHaveLength(1);
    expect(reviewer.requests[0]!.policy_reason).toContain(
      '(a program the command runs); the command asked to run outside',
    );
    // Without a rule, require_escalated makes every exec a question already: the same one carries it.
    const unruled = setup('', { sessionStartMs: Date.now() - 60_000 });
    const request = exec(GIT, ['git', 'status'], evil, {
      projectRoot: join(evil, '..'),
      sandboxPermissions: 'require_escalated',
    });
    expect(await unruled.orchestrator.decideExec(request)).toMatchObject({
      action: 'escalate',
      program: GIT,
    });
    expect(unruled.reviewer.requests).toHaveLength(1);
    expect(unruled.reviewer.requests[0]).toMatchObject({
      available_decisions: ['approved', 'abort'],
      policy_reason: expect.stringContaining(
        `but the working directory ${evil} was created during this session`,
      ),
    });
  });

  it('escalates git status at the work tree of a repository that predates the session, not below it', async () => {
    const ws = outsideDir();
    execFileSync('git', ['init', '-q'], { cwd: ws, env: GIT_ENV });
    mkdirSync(join(ws, 'src'));
    const { orchestrator } = setup(GIT_STATUS);
    expect(
      unpinned(await orchestrator.decideExec(exec(GIT, ['git', 'status'], ws, { projectRoot: ws }))),
    ).toEqual({
      action: 'escalate',
      sandbox: null,
      program: GIT,
      cwd: ws,
    });
    // Below the writable root, the sandbox could rename the directory while git looks for .git by name.
    expect(
      await orchestrator.decideExec(exec(GIT, ['git', 'status'], join(ws, 'src'), { projectRoot: ws })),
    ).toEqual({
      action: 'run',
      inPlace: expect.stringContaining(`the working directory ${join(ws, 'src')} lies inside ${ws}, `),
    });
  });

  it('under never with a plain allow rule: in place, nobody asked (the prompt refusal is unchanged)', async () => {
    const { orchestrator, reviewer } = setup('prefix_rule(pattern=["git"], decision="prompt")\n', {
      approvalPolicy: 'never',
    });
    expect(await orchestrator.decideExec(exec(GIT, ['git', 'status'], tempDir('ux-decide-trust-')))).toEqual({
      action: 'deny',
      reason: `Execution forbidden by policy: ${NEVER_PROMPT_REASON}`,
    });
    expect(reviewer.requests).toEqual([]);
  });
});
