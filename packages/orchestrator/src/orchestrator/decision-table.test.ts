import {
  type AdditionalPermissions,
  type ApprovalPolicy,
  type EffectivePolicy,
  RejectedError,
  type ReviewDecision,
  type ReviewDecisionType,
  type SandboxPermissions,
} from '@ux/protocol';
import { createSandboxRegistry } from '@ux/protocol-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  DENY_READ,
  FULL_ACCESS,
  fakeBackend,
  PERMISSION_DENIED,
  recordingAttempt,
  recordingReviewer,
  WORKSPACE_WRITE,
} from '../../test/fakes.js';
import { NEVER_PROMPT_REASON } from '../policy/approval-requirement.js';
import { createExecPolicy } from '../policy/exec-policy.js';
import { parseRulesFile } from '../policy/parse-rules-file.js';
import { type BashParser, loadBashParser } from '../shell/bash-parser.js';
import { RETRY_REASON } from './attempt-loop.js';
import { createOrchestrator } from './create-orchestrator.js';

let bash: BashParser;
beforeAll(async () => {
  bash = await loadBashParser();
});

const granular = (overrides: { sandbox_approval?: boolean; rules?: boolean }): ApprovalPolicy => ({
  granular: {
    sandbox_approval: true,
    rules: true,
    skill_approval: true,
    request_permissions: true,
    mcp_elicitations: true,
    ...overrides,
  },
});

interface Row {
  row: number;
  title: string;
  policy: ApprovalPolicy;
  sandboxPolicy?: EffectivePolicy;
  managedNetwork?: boolean;
  /** Default: `cargo test`, not dangerous, not known-safe, matched by no rule. */
  script?: string;
  permissions?: SandboxPermissions;
  additional?: AdditionalPermissions;
  justification?: string;
  rules?: string;
  /** What each run does: exit early with a permission error, or keep running. */
  runs: ('denied' | 'ok')[];
  /** The reviewer's answer to every prompt. */
  answer?: ReviewDecision;
  expected: {
    /** Every prompt, in order. */
    prompts: { retry: boolean; reason?: string; decisions?: ReviewDecisionType[] }[];
    /** The sandbox of each attempt (`null`: unsandboxed). */
    attempts: (string | null)[];
    outcome: 'completed' | 'escalated' | 'denied' | { rejected: string; source: string };
  };
}

const JUSTIFICATION = 'Requires escalated permissions to bypass the sandbox in tests.';
const ESCALATION_REJECTED = (p: string) =>
  `approval policy is ${p}; reject command — you cannot ask for escalated permissions if the approval policy is ${p}`;

// docs/reference/orchestrator.md §5, row by row (K = restricted workspace-write unless stated; "deny" = a denial
// detected in the early-exit window; a platform sandbox is available).
const ROWS: Row[] = [
  {
    row: 1,
    title: 'untrusted, not known-safe: prompt, sandboxed, no second prompt, unsandboxed retry',
    policy: 'untrusted',
    runs: ['denied', 'ok'],
    expected: { prompts: [{ retry: false }], attempts: ['fake', null], outcome: 'escalated' },
  },
  {
    row: 2,
    title: 'untrusted, known-safe: no prompt, sandboxed, retry prompt, unsandboxed',
    policy: 'untrusted',
    script: 'ls -la',
    runs: ['denied', 'ok'],
    expected: {
      prompts: [{ retry: true, reason: RETRY_REASON }],
      attempts: ['fake', null],
      outcome: 'escalated',
    },
  },
  {
    row: 2,
    title: 'untrusted, known-safe: retry refused',
    policy: 'untrusted',
    script: 'ls -la',
    runs: ['denied', 'ok'],
    answer: { type: 'denied' },
    expected: {
      prompts: [{ retry: true, reason: RETRY_REASON }],
      attempts: ['fake'],
      outcome: { rejected: 'rejected by the user', source: 'user' },
    },
  },
  {
    row: 3,
    title: 'on-failure: no prompt, sandboxed, retry prompt, unsandboxed',
    policy: 'on-failure',
    runs: ['denied', 'ok'],
    expected: {
      prompts: [{ retry: true, reason: RETRY_REASON }],
      attempts: ['fake', null],
      outcome: 'escalated',
    },
  },
  {
    row: 3,
    title: 'on-failure: a run that is not denied is returned at once',
    policy: 'on-failure',
    runs: ['ok'],
    expected: { prompts: [], attempts: ['fake'], outcome: 'completed' },
  },
  {
    row: 4,
    title: 'on-failure with deny-read: no retry, denial returned',
    policy: 'on-failure',
    sandboxPolicy: DENY_READ,
    runs: ['denied'],
    expected: { prompts: [], attempts: ['fake'], outcome: 'denied' },
  },
  {
    row: 4,
    title: 'untrusted with deny-read: prompt as row 1, then no retry',
    policy: 'untrusted',
    sandboxPolicy: DENY_READ,
    runs: ['denied'],
    expected: { prompts: [{ retry: false }], attempts: ['fake'], outcome: 'denied' },
  },
  {
    row: 5,
    title: 'on-request: no prompt, sandboxed, denial returned',
    policy: 'on-request',
    runs: ['denied'],
    expected: { prompts: [], attempts: ['fake'], outcome: 'denied' },
  },
  {
    row: 5,
    title: 'on-request with deny-read: the same',
    policy: 'on-request',
    sandboxPolicy: DENY_READ,
    runs: ['denied'],
    expected: { prompts: [], attempts: ['fake'], outcome: 'denied' },
  },
  {
    row: 6,
    title: 'on-request, require_escalated: prompt with the justification, unsandboxed, no detection',
    policy: 'on-request',
    permissions: 'require_escalated',
    justification: JUSTIFICATION,
    runs: ['denied'],
    expected: {
      prompts: [
        {
          retry: false,
          reason: JUSTIFICATION,
          decisions: ['approved', 'approved_for_session', 'approved_execpolicy_amendment', 'denied', 'abort'],
        },
      ],
      attempts: [null],
      outcome: 'completed',
    },
  },
  {
    row: 7,
    title: 'on-request, require_escalated, deny-read: prompt, sandboxed anyway, denial returned',
    policy: 'on-request',
    sandboxPolicy: DENY_READ,
    permissions: 'require_escalated',
    justification: JUSTIFICATION,
    runs: ['denied'],
    expected: { prompts: [{ retry: false, reason: JUSTIFICATION }], attempts: ['fake'], outcome: 'denied' },
  },
  {
    row: 8,
    title:
      'on-request, with_additional_permissions: prompt (approve or abort), widened sandbox, denial returned',
    policy: 'on-request',
    permissions: 'with_additional_permissions',
    additional: { network: { enabled: true }, file_system: { write: ['out'] } },
    runs: ['denied'],
    expected: {
      prompts: [{ retry: false, decisions: ['approved', 'denied', 'abort'] }],
      attempts: ['fake'],
      outcome: 'denied',
    },
  },
  {
    row: 9,
    title: 'never: no prompt, sandboxed, denial returned',
    policy: 'never',
    runs: ['denied'],
    expected: { prompts: [], attempts: ['fake'], outcome: 'denied' },
  },
  {
    row: 9,
    title: 'never, dangerous command: forbidden',
    policy: 'never',
    script: 'rm -rf build',
    runs: [],
    expected: {
      prompts: [],
      attempts: [],
      outcome: { rejected: '`rm -rf build` rejected: blocked by policy', source: 'policy' },
    },
  },
  {
    row: 10,
    title: 'granular with sandbox_approval: no prompt, sandboxed, retry prompt, unsandboxed',
    policy: granular({ sandbox_approval: true }),
    runs: ['denied', 'ok'],
    expected: {
      prompts: [{ retry: true, reason: RETRY_REASON }],
      attempts: ['fake', null],
      outcome: 'escalated',
    },
  },
  {
    row: 11,
    title: 'granular without sandbox_approval: denial returned',
    policy: granular({ sandbox_approval: false }),
    runs: ['denied'],
    expected: { prompts: [], attempts: ['fake'], outcome: 'denied' },
  },
  ...(['untrusted', 'on-failure', 'never'] as const).flatMap((policy): Row[] =>
    (['require_escalated', 'with_additional_permissions'] as const).map((permissions) => ({
      row: 12,
      title: `${policy}, ${permissions}: rejected by the pre-gate`,
      policy,
      permissions,
      ...(permissions === 'with_additional_permissions'
        ? { additional: { network: { enabled: true } } }
        : {}),
      runs: [],
      expected: {
        prompts: [],
        attempts: [],
        outcome: { rejected: ESCALATION_REJECTED(policy), source: 'policy' },
      },
    })),
  ),
  {
    row: 12,
    title: 'granular, require_escalated: rejected by the pre-gate',
    policy: granular({}),
    permissions: 'require_escalated',
    runs: [],
    expected: {
      prompts: [],
      attempts: [],
      outcome: { rejected: ESCALATION_REJECTED('granular'), source: 'policy' },
    },
  },
  {
    row: 13,
    title: 'an allow rule matches every segment: no prompt, unsandboxed, no detection',
    policy: 'on-request',
    script: 'cargo build && make all',
    rules:
      'prefix_rule(pattern=["cargo"], decision="allow")\nprefix_rule(pattern=["make"], decision="allow")',
    runs: ['denied'],
    expected: { prompts: [], attempts: [null], outcome: 'completed' },
  },
  {
    row: 13,
    title: 'an allow rule for one segment only: sandboxed as usual',
    policy: 'on-request',
    script: 'cargo build && ./configure',
    rules: 'prefix_rule(pattern=["cargo"], decision="allow")',
    runs: ['ok'],
    expected: { prompts: [], attempts: ['fake'], outcome: 'completed' },
  },
  {
    row: 14,
    title: 'a prompt rule: prompt with its reason, then per S, D and P',
    policy: 'on-request',
    script: 'docker build .',
    rules: 'prefix_rule(pattern=["docker"], decision="prompt", justification="Docker reaches the host.")',
    runs: ['denied'],
    expected: {
      prompts: [{ retry: false, reason: '`docker build .` requires approval: Docker reaches the host.' }],
      attempts: ['fake'],
      outcome: 'denied',
    },
  },
  {
    row: 14,
    title: 'a prompt rule under on-failure: the approval covers the retry',
    policy: 'on-failure',
    script: 'docker build .',
    rules: 'prefix_rule(pattern=["docker"], decision="prompt")',
    runs: ['denied', 'ok'],
    expected: {
      prompts: [{ retry: false, reason: '`docker build .` requires approval by policy' }],
      attempts: ['fake', null],
      outcome: 'escalated',
    },
  },
  {
    row: 14,
    title: 'a prompt rule under never: forbidden',
    policy: 'never',
    script: 'docker build .',
    rules: 'prefix_rule(pattern=["docker"], decision="prompt")',
    runs: [],
    expected: { prompts: [], attempts: [], outcome: { rejected: NEVER_PROMPT_REASON, source: 'policy' } },
  },
  {
    row: 14,
    title: 'a prompt rule under granular without rules: forbidden',
    policy: granular({ rules: false }),
    script: 'docker build .',
    rules: 'prefix_rule(pattern=["docker"], decision="prompt")',
    runs: [],
    expected: {
      prompts: [],
      attempts: [],
      outcome: {
        rejected: 'approval required by policy rule, but AskForApproval::Granular.rules is false',
        source: 'policy',
      },
    },
  },
  {
    row: 15,
    title: 'a forbidden rule: rejected with its reason',
    policy: 'untrusted',
    script: 'git push --force',
    rules:
      'prefix_rule(pattern=["git", "push"], decision="forbidden", justification="Open a pull request instead.")',
    runs: [],
    expected: {
      prompts: [],
      attempts: [],
      outcome: { rejected: '`git push --force` rejected: Open a pull request instead.', source: 'policy' },
    },
  },
  {
    row: 16,
    title: 'danger-full-access: no sandbox, no detection',
    policy: 'on-failure',
    sandboxPolicy: FULL_ACCESS,
    runs: ['denied'],
    expected: { prompts: [], attempts: [null], outcome: 'completed' },
  },
  {
    row: 16,
    title: 'danger-full-access with a managed network proxy: sandboxed',
    policy: 'on-failure',
    sandboxPolicy: FULL_ACCESS,
    managedNetwork: true,
    runs: ['ok'],
    expected: { prompts: [], attempts: ['fake'], outcome: 'completed' },
  },
  {
    row: 17,
    title:
      'on-request with a managed network proxy: sandboxed, the network retry is unreachable, denial returned',
    policy: 'on-request',
    managedNetwork: true,
    runs: ['denied'],
    expected: { prompts: [], attempts: ['fake'], outcome: 'denied' },
  },
];

describe('the decision table (docs/reference/orchestrator.md §5)', () => {
  it.each(ROWS)('row $row: $title', async (row) => {
    const reviewer = recordingReviewer(row.answer ?? { type: 'approved' });
    const backend = fakeBackend('fake');
    const orchestrator = createOrchestrator({
      sandboxRegistry: createSandboxRegistry({ fake: backend }),
      platform: 'linux',
      approvalPolicy: row.policy,
      policy: row.sandboxPolicy ?? WORKSPACE_WRITE,
      managedNetwork: row.managedNetwork ?? false,
      execPolicy: createExecPolicy(parseRulesFile(row.rules ?? '', 'rules/default.rules')),
      reviewer,
      bashParser: bash,
    });
    const { attempt, calls } = recordingAttempt(row.runs);
    const run = orchestrator.run(
      {
        callId: 'call-1',
        argv: ['/bin/bash', '-lc', row.script ?? 'cargo test'],
        cwd: '/work/repo',
        tty: false,
        ...(row.permissions ? { sandboxPermissions: row.permissions } : {}),
        ...(row.additional ? { additionalPermissions: row.additional } : {}),
        ...(row.justification ? { justification: row.justification } : {}),
      },
      attempt,
    );

    const { outcome } = row.expected;
    if (typeof outcome === 'object') {
      const error = await run.then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(RejectedError.isInstance(error), String(error)).toBe(true);
      expect(error).toMatchObject({ reason: outcome.rejected, source: outcome.source });
    } else {
      const result = await run;
      expect(result.status).toBe(outcome === 'escalated' ? 'completed' : outcome);
      expect(result.attempts).toBe(row.expected.attempts.length);
      if (result.status === 'completed') expect(result.escalated).toBe(outcome === 'escalated');
      if (result.status === 'denied') {
        expect(result.denial).toMatchObject({ sandboxType: 'fake', ...PERMISSION_DENIED });
        expect(result.value).toBe(`run ${row.expected.attempts.length}`);
      }
    }

    expect(calls.map((call) => call.sandbox)).toEqual(row.expected.attempts);
    expect(calls.map((call) => call.attempt)).toEqual(row.expected.attempts.map((_, index) => index + 1));
    expect(reviewer.requests).toHaveLength(row.expected.prompts.length);
    row.expected.prompts.forEach((prompt, index) => {
      const request = reviewer.requests[index]!;
      expect(request.retry).toBe(prompt.retry);
      expect(request.reason).toBe(prompt.reason);
      expect(request.command).toEqual(['/bin/bash', '-lc', row.script ?? 'cargo test']);
      expect(request.call_id).toBe('call-1');
      if (prompt.decisions) expect(request.available_decisions).toEqual(prompt.decisions);
    });
    // The sandbox is probed only when a sandboxed attempt was planned.
    expect(backend.probes).toBe(row.expected.attempts.includes('fake') ? 1 : 0);
  });

  it('row 8 runs inside the widened policy and shows the permissions being asked for', async () => {
    const reviewer = recordingReviewer({ type: 'approved' });
    const orchestrator = createOrchestrator({
      sandboxRegistry: createSandboxRegistry({ fake: fakeBackend('fake') }),
      platform: 'linux',
      approvalPolicy: 'on-request',
      policy: WORKSPACE_WRITE,
      reviewer,
      bashParser: bash,
    });
    const { attempt, calls } = recordingAttempt(['ok']);
    const additional = { network: { enabled: true }, file_system: { write: ['out'], read: ['/opt/data'] } };
    await orchestrator.run(
      {
        callId: 'c',
        argv: ['/bin/bash', '-lc', 'make'],
        cwd: '/work/repo',
        tty: false,
        sandboxPermissions: 'with_additional_permissions',
        additionalPermissions: additional,
      },
      attempt,
    );
    expect(reviewer.requests[0]!.additional_permissions).toEqual(additional);
    expect(calls[0]!.policy).toEqual({
      network: 'enabled',
      fileSystem: {
        kind: 'restricted',
        entries: [
          ...(WORKSPACE_WRITE.fileSystem.kind === 'restricted' ? WORKSPACE_WRITE.fileSystem.entries : []),
          { path: { type: 'path', path: '/opt/data' }, access: 'read' },
          { path: { type: 'path', path: '/work/repo/out' }, access: 'write' },
        ],
      },
    });
  });

  it('row 12 lets permissions granted earlier through the pre-gate and skips their prompt', async () => {
    const reviewer = recordingReviewer({ type: 'approved' });
    const orchestrator = createOrchestrator({
      sandboxRegistry: createSandboxRegistry({ fake: fakeBackend('fake') }),
      platform: 'linux',
      approvalPolicy: 'on-failure',
      policy: WORKSPACE_WRITE,
      reviewer,
      bashParser: bash,
    });
    const { attempt, calls } = recordingAttempt(['ok']);
    const outcome = await orchestrator.run(
      {
        callId: 'c',
        argv: ['/bin/bash', '-lc', 'make'],
        cwd: '/work/repo',
        tty: false,
        sandboxPermissions: 'with_additional_permissions',
        additionalPermissions: { network: { enabled: true } },
        permissionsPreapproved: true,
      },
      attempt,
    );
    expect(outcome.status).toBe('completed');
    expect(reviewer.requests).toEqual([]);
    expect(calls[0]!.policy?.network).toBe('enabled');
  });
});
