import type { DenialEvidence, SandboxBackend } from '@ux/protocol/core';

// Lower-case fragments of the messages sandboxes make programs print (docs/reference/sandbox.md §9).
const DENIAL_KEYWORDS = [
  'operation not permitted',
  'permission denied',
  'read-only file system',
  'seccomp',
  'sandbox',
  'landlock',
  'failed to write file',
  // The network proxy's refusals: its 403 body, its reason phrase, and curl's and git's line for a
  // refused CONNECT (inside a sandbox the only proxy is ux's).
  'ux: network access to',
  'blocked by ux network policy',
  'connect tunnel failed, response 403',
];

// SIGSYS on Linux (x86 and arm): a seccomp filter that kills the offending process.
const LINUX_SIGSYS = 31;

// Usage errors and "cannot execute" / "not found": the program failed on its own.
const ORDINARY_FAILURES = new Set([2, 126, 127]);

export interface DenialCheck {
  /** Whether the command ran inside a sandbox; without one nothing is a denial. */
  sandboxed: boolean;
  /** Where it ran: on Linux a seccomp kill (exit 128 + SIGSYS) is a denial. */
  platform: NodeJS.Platform;
  exitCode: number;
  /** The aggregated output (stdout and stderr merged). */
  output: string;
  stdout?: string;
  stderr?: string;
}

/**
 * Codex's heuristic for "the sandbox stopped this" (docs/reference/sandbox.md §9): never for exit 0 or
 * an unsandboxed run; yes when any output mentions a sandbox-style refusal (checked before the exit
 * code, so 126 with "permission denied" counts); no for exit 2, 126 and 127; yes for a seccomp kill on
 * Linux.
 */
export function isLikelySandboxDenied(check: DenialCheck): boolean {
  if (!check.sandboxed || check.exitCode === 0) return false;
  for (const text of [check.stderr, check.stdout, check.output]) {
    if (text === undefined) continue;
    const lower = text.toLowerCase();
    if (DENIAL_KEYWORDS.some((keyword) => lower.includes(keyword))) return true;
  }
  if (ORDINARY_FAILURES.has(check.exitCode)) return false;
  return check.platform === 'linux' && check.exitCode === 128 + LINUX_SIGSYS;
}

/**
 * Whether an early exit under `backend` was a sandbox denial: exit 0 never is; a remote host that
 * already judged it a denial (`sandboxDenied`) is believed; then the backend's own classifier decides
 * when it has one and is sure (`denied` / `not_denied`); `unknown`, no classifier or a classifier that
 * throws leaves it to `isLikelySandboxDenied`.
 */
export function isSandboxDenial(
  backend: SandboxBackend,
  evidence: DenialEvidence & { sandboxDenied?: boolean },
  platform: NodeJS.Platform,
): boolean {
  if (evidence.exitCode === 0) return false;
  if (evidence.sandboxDenied === true) return true;
  let verdict: string = 'unknown';
  try {
    verdict = backend.classifyDenial?.(evidence) ?? 'unknown';
  } catch {
    // A broken classifier must not decide; the heuristic still can.
  }
  if (verdict === 'denied') return true;
  if (verdict === 'not_denied') return false;
  return isLikelySandboxDenied({
    sandboxed: true,
    platform,
    exitCode: evidence.exitCode,
    output: evidence.output,
  });
}
