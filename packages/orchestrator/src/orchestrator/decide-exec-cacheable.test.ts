import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ApprovalPolicy, SandboxPermissions } from '@ux/protocol';
import { createSandboxRegistry } from '@ux/protocol-utils';
import { tempDir } from '@ux/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  DENY_READ,
  fakeBackend,
  recordingAttempt,
  recordingReviewer,
  WORKSPACE_WRITE,
} from '../../test/fakes.js';
import { createExecPolicy } from '../policy/exec-policy.js';
import { parseRulesFile } from '../policy/parse-rules-file.js';
import { type BashParser, loadBashParser } from '../shell/bash-parser.js';
import { createOrchestrator, type OrchestratorSettings } from './create-orchestrator.js';
import type { ExecDecision, ExecDecisionRequest } from './decide-exec.js';

// `cacheable` lets the zsh fork's broker answer the same exec again by itself (packages/zsh-fork): it
// must only be set where nothing but the exec's words, the rules and the command's fixed settings made
// the decision. These tests vary everything else a decision could read and check the answer holds.

let bash: BashParser;
beforeAll(async () => {
  bash = await loadBashParser();
});

const backend = fakeBackend('fake');
const RULES = [
  'prefix_rule(pattern=["touch"], decision="allow")',
  'prefix_rule(pattern=["git", "push"], decision="prompt")',
  'prefix_rule(pattern=["shred"], decision="forbidden")',
  'prefix_rule(pattern=["/bin/ls", "-R"], decision="allow")',
].join('\n');

function orchestratorFor(approvalPolicy: ApprovalPolicy, overrides: Partial<OrchestratorSettings> = {}) {
  return createOrchestrator({
    sandboxRegistry: createSandboxRegistry({ fake: backend }),
    platform: 'linux',
    approvalPolicy,
    policy: WORKSPACE_WRITE,
    reviewer: recordingReviewer({ type: 'approved' }),
    bashParser: bash,
    execPolicy: createExecPolicy(parseRulesFile(RULES, 'test.rules')),
    // Starts a second ago: a file the test writes now was "changed during the session".
    sessionStartMs: Date.now() - 1_000,
    ...overrides,
  });
}

function release(decision: ExecDecision): ExecDecision {
  if (decision.action === 'escalate') decision.cwdPin?.release();
  return decision;
}

/** A program in a fresh workspace, copied from `from` before the session started (trusted). */
function workspace(from: string) {
  const root = tempDir('ux-cacheable-');
  mkdirSync(join(root, 'bin'));
  const program = join(root, 'bin', 'tool');
  copyFileSync(from, program);
  return { root, program };
}

const commands: [string, string[]][] = [
  ['/bin/echo', ['echo', 'hi']],
  ['/usr/bin/touch', ['touch', 'x']],
  ['/usr/bin/rm', ['rm', '-f', 'x']],
  ['/usr/bin/rm', ['rm', 'x']],
  ['/bin/ls', ['ls', '-R']],
  ['/bin/ls', ['ls']],
  ['/usr/bin/git', ['git', 'push']],
  ['/usr/bin/shred', ['shred', 'x']],
  ['/bin/sh', ['sh', '-c', 'rm -rf /tmp/x']],
  ['/bin/sh', ['sh', '-c', 'echo hi']],
  ['/usr/bin/env', ['env', 'rm', '-f', 'x']],
];
const policies: ApprovalPolicy[] = ['never', 'on-failure', 'on-request', 'untrusted'];
const permissions: (SandboxPermissions | undefined)[] = [undefined, 'require_escalated'];

describe('decideExec: cacheable Run answers', () => {
  it('holds under every variation a cacheable decision must not read (files, environment, time)', async () => {
    let cacheable = 0;
    let notCacheable = 0;
    for (const approvalPolicy of policies) {
      for (const sandboxPermissions of permissions) {
        for (const sandboxed of [true, false]) {
          for (const [file, argv] of commands) {
            const orchestrator = orchestratorFor(approvalPolicy);
            const { root } = workspace('/bin/true');
            const request: ExecDecisionRequest = {
              callId: 'call-1',
              file,
              argv,
              cwd: root,
              env: { TMPDIR: root, HOME: root },
              parent: {
                sandbox: sandboxed ? { backend, policy: WORKSPACE_WRITE } : null,
                projectRoot: root,
                env: { PATH: '/usr/bin:/bin', HOME: root },
                ...(sandboxPermissions ? { sandboxPermissions } : {}),
              },
            };
            const first = release(await orchestrator.decideExec(request));
            if (first.action !== 'run' || !first.cacheable) {
              notCacheable++;
              continue;
            }
            cacheable++;
            expect(first).toEqual({ action: 'run', cacheable: true });
            // What the sandbox could change between two identical execs: the workspace's files (a
            // config written now), the exec's own environment. The answer must not move.
            writeFileSync(join(root, '.gitconfig'), '[core]\n\tfsmonitor = /tmp/evil\n');
            mkdirSync(join(root, '.git'), { recursive: true });
            const again = release(
              await orchestrator.decideExec({
                ...request,
                env: { TMPDIR: '/', HOME: '/', PATH: `${root}/bin` },
              }),
            );
            expect(again, `${approvalPolicy} ${sandboxPermissions} ${sandboxed} ${argv.join(' ')}`).toEqual(
              first,
            );
          }
        }
      }
    }
    // The matrix covers both kinds.
    expect(cacheable).toBeGreaterThan(20);
    expect(notCacheable).toBeGreaterThan(20);
  });

  it('a program the sandbox rewrites keeps its cacheable answer (the decision never read the file)', async () => {
    const orchestrator = orchestratorFor('on-request');
    const { root, program } = workspace('/bin/true');
    const request: ExecDecisionRequest = {
      callId: 'c',
      file: program,
      argv: ['tool', 'a'],
      cwd: root,
      parent: {
        sandbox: { backend, policy: WORKSPACE_WRITE },
        projectRoot: root,
        env: { PATH: '/usr/bin:/bin' },
      },
    };
    const first = await orchestrator.decideExec(request);
    expect(first).toEqual({ action: 'run', cacheable: true });
    writeFileSync(program, '#!/bin/sh\necho replaced\n');
    chmodSync(program, 0o755);
    expect(await orchestrator.decideExec(request)).toEqual(first);
  });

  it('is never set for an escalation, a prompt, a denial, a program kept in by its file, or a missing file', async () => {
    const sandbox = { backend, policy: WORKSPACE_WRITE };
    const cases: [
      ApprovalPolicy,
      Partial<OrchestratorSettings>,
      Omit<ExecDecisionRequest, 'callId' | 'cwd'>,
    ][] = [
      // An allow rule drives an escalation (reads the program file and the directory).
      [
        'on-request',
        {},
        { file: '/usr/bin/touch', argv: ['touch', 'x'], parent: { sandbox, projectRoot: '/' } },
      ],
      // A prompt, approved: a one-time answer.
      [
        'on-request',
        {},
        { file: '/usr/bin/git', argv: ['git', 'push'], parent: { sandbox, projectRoot: '/' } },
      ],
      [
        'on-request',
        {},
        { file: '/usr/bin/rm', argv: ['rm', '-f', 'x'], parent: { sandbox, projectRoot: '/' } },
      ],
      [
        'untrusted',
        {},
        { file: '/usr/bin/touch', argv: ['tool'], parent: { sandbox: null, projectRoot: '/' } },
      ],
      // Forbidden.
      [
        'on-request',
        {},
        { file: '/usr/bin/shred', argv: ['shred', 'x'], parent: { sandbox, projectRoot: '/' } },
      ],
      // Under deny-read an allowed rule runs in place, but the parent asked to escalate: no cache for
      // anything that is not the plain path.
      [
        'on-request',
        { policy: DENY_READ },
        {
          file: '/usr/bin/touch',
          argv: ['touch', 'x'],
          parent: {
            sandbox: { backend, policy: DENY_READ },
            projectRoot: '/',
            env: { PATH: '/usr/bin:/bin' },
          },
        },
      ],
      // The file zsh named does not exist (yet): run, so the exec fails by itself; not cacheable.
      [
        'on-request',
        {},
        { file: '/nonexistent/tool', argv: ['tool'], parent: { sandbox, projectRoot: '/' } },
      ],
    ];
    for (const [approvalPolicy, overrides, request] of cases) {
      const orchestrator = orchestratorFor(approvalPolicy, overrides);
      const decision = release(
        await orchestrator.decideExec({ callId: 'c', cwd: tempDir('ux-cacheable-'), ...request }),
      );
      expect(decision, request.argv.join(' ')).not.toHaveProperty('cacheable');
    }
  });

  it('an allow rule for a bare name matched only by file name is not cacheable (it read PATH and the file)', async () => {
    const orchestrator = orchestratorFor('on-request');
    const { root, program } = workspace('/usr/bin/touch');
    const decision = release(
      await orchestrator.decideExec({
        callId: 'c',
        file: program.replace(/tool$/, 'touch'),
        argv: ['touch', 'x'],
        cwd: root,
        parent: {
          sandbox: { backend, policy: WORKSPACE_WRITE },
          projectRoot: root,
          env: { PATH: '/usr/bin:/bin' },
        },
      }),
    );
    expect(decision).not.toHaveProperty('cacheable');
  });

  it('an amendment approved in the session tells its listeners at once, and changes what the exec gets', async () => {
    const orchestrator = orchestratorFor('on-request', {
      reviewer: recordingReviewer({ type: 'approved_execpolicy_amendment', amendment: ['cat', 'f'] }),
      // Every file of the test predates the session: an allowed program may leave the sandbox.
      sessionStartMs: Date.now() + 60_000,
    });
    const changes: string[][] = [];
    const stop = orchestrator.onExecPolicyChange(() =>
      changes.push([...(orchestrator.execPolicy.rules.at(-1)?.pattern ?? [])].map(String)),
    );
    const root = tempDir('ux-cacheable-');
    const cat: ExecDecisionRequest = {
      callId: 'c',
      file: '/bin/cat',
      argv: ['cat', 'f'],
      cwd: root,
      parent: {
        sandbox: { backend, policy: WORKSPACE_WRITE },
        projectRoot: root,
        env: { PATH: '/usr/bin:/bin' },
      },
    };
    expect(await orchestrator.decideExec(cat)).toEqual({ action: 'run', cacheable: true });
    await orchestrator.run(
      {
        callId: 'call-2',
        argv: ['/bin/bash', '-lc', 'cat f'],
        cwd: root,
        tty: false,
        sandboxPermissions: 'require_escalated',
        justification: 'read it',
      },
      recordingAttempt(['ok']).attempt,
    );
    expect(changes).toEqual([['cat', 'f']]);
    // The cached answer would now be wrong: a rule drives this exec out of the sandbox.
    const after = release(await orchestrator.decideExec(cat));
    expect(after).not.toHaveProperty('cacheable');
    expect(after).toMatchObject({ action: 'escalate' });
    stop();
  });
});
