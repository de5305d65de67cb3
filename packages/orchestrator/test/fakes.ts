import {
  type ApprovalRequest,
  type DenialVerdict,
  type EffectivePolicy,
  REVIEWER_SPECIFICATION_VERSION,
  type ReviewDecision,
  type Reviewer,
  SANDBOX_CAPABILITIES,
  SANDBOX_SPECIFICATION_VERSION,
  type SandboxBackend,
  type SandboxProbe,
} from '@ux/protocol';
import type { Attempt, AttemptResult } from '../src/orchestrator/attempt.js';

/** Test doubles that record what the orchestrator gave them. Used by tests only. */

export interface FakeBackend extends SandboxBackend {
  probes: number;
}

export function fakeBackend(
  id = 'fake',
  options: {
    platforms?: NodeJS.Platform[];
    probe?: SandboxProbe | (() => Promise<SandboxProbe>);
    classify?: (evidence: { exitCode: number; output: string }) => DenialVerdict;
  } = {},
): FakeBackend {
  const backend: FakeBackend = {
    specificationVersion: SANDBOX_SPECIFICATION_VERSION,
    id,
    platforms: options.platforms ?? ['linux'],
    probes: 0,
    async probe() {
      backend.probes++;
      // A fake that never plans: it declares every guarantee, so any policy may select it.
      const probe = options.probe ?? { available: true, enforces: SANDBOX_CAPABILITIES };
      return typeof probe === 'function' ? probe() : probe;
    },
    async plan() {
      throw new Error('the orchestrator never plans; the attempt does');
    },
    ...(options.classify ? { classifyDenial: options.classify } : {}),
  };
  return backend;
}

export interface RecordingReviewer extends Reviewer {
  requests: ApprovalRequest[];
}

/** Answers from a script, in order (the last answer repeats); records every request. */
export function recordingReviewer(
  answers: ReviewDecision | readonly (ReviewDecision | ((request: ApprovalRequest) => ReviewDecision))[],
  id = 'user',
): RecordingReviewer {
  const script = Array.isArray(answers) ? answers : [answers];
  const reviewer: RecordingReviewer = {
    specificationVersion: REVIEWER_SPECIFICATION_VERSION,
    id,
    requests: [],
    async review(request) {
      reviewer.requests.push(structuredClone(request));
      const answer = script[Math.min(reviewer.requests.length - 1, script.length - 1)]!;
      return typeof answer === 'function' ? answer(request) : answer;
    },
  };
  return reviewer;
}

export const PERMISSION_DENIED = { exitCode: 1, output: 'touch: cannot touch /etc/x: Permission denied\n' };

export interface AttemptCall {
  attempt: 1 | 2;
  sandbox: string | null;
  policy: EffectivePolicy | null;
}

/**
 * An attempt whose runs exit early with the given evidence (`'denied'`: a permission error) or keep
 * running (`'ok'`); records the sandbox and policy of every call.
 */
export function recordingAttempt(runs: readonly ('ok' | 'denied' | { exitCode: number; output: string })[]): {
  attempt: Attempt<string>;
  calls: AttemptCall[];
} {
  const calls: AttemptCall[] = [];
  const attempt: Attempt<string> = async (sandbox, context) => {
    calls.push({
      attempt: context.attempt,
      sandbox: sandbox?.backend.id ?? null,
      policy: sandbox?.policy ?? null,
    });
    const run = runs[calls.length - 1] ?? 'ok';
    const result: AttemptResult<string> = { value: `run ${calls.length}` };
    if (run === 'denied') result.earlyExit = PERMISSION_DENIED;
    else if (run !== 'ok') result.earlyExit = run;
    return result;
  };
  return { attempt, calls };
}

export const WORKSPACE_WRITE: EffectivePolicy = {
  fileSystem: {
    kind: 'restricted',
    entries: [
      { path: { type: 'special', value: 'root' }, access: 'read' },
      { path: { type: 'special', value: 'cwd' }, access: 'write' },
    ],
  },
  network: 'restricted',
};

/** Workspace-write plus a deny-read entry. */
export const DENY_READ: EffectivePolicy = {
  ...WORKSPACE_WRITE,
  fileSystem: {
    kind: 'restricted',
    entries: [
      ...(WORKSPACE_WRITE.fileSystem.kind === 'restricted' ? WORKSPACE_WRITE.fileSystem.entries : []),
      { path: { type: 'glob', pattern: '**/*.env' }, access: 'none' },
    ],
  },
};

export const FULL_ACCESS: EffectivePolicy = { fileSystem: { kind: 'unrestricted' }, network: 'enabled' };
