import type { SandboxDeniedError } from '@ux/protocol/core';
import type { RetryQuestion } from './attempt-loop.js';

/** Why policy asks before a retry: the blocked host, or the sandbox's denial with its last line. */
export function retryPolicyReason(retry: Pick<RetryQuestion, 'networkContext' | 'denial'>): string {
  return retry.networkContext
    ? `the sandbox blocked network access to "${retry.networkContext.host}"`
    : `the sandbox blocked it${denialSummary(retry.denial)}`;
}

/** The last line the denied run printed, as a hint of what the sandbox refused. */
function denialSummary(denial: SandboxDeniedError): string {
  const last = denial.output.trimEnd().split('\n').pop()?.trim() ?? '';
  if (last === '') return ` (exit code ${denial.exitCode})`;
  return ` (${last.length > 160 ? `${last.slice(0, 160)}…` : last})`;
}
