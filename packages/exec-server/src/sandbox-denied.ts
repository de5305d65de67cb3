import type { SandboxBackend } from '@ux/protocol';

const KEYWORDS = [
  'operation not permitted',
  'permission denied',
  'read-only file system',
  'seccomp',
  'sandbox',
  'landlock',
  'failed to write file',
];
/** Usage errors and "not found / not executable" are the command's own failures. */
const ORDINARY_FAILURES = new Set([2, 126, 127]);
const SIGSYS_EXIT = 128 + 31;

/**
 * The `sandboxDenied` flag of a sandboxed process's exit (spec §7.2): never for exit 0; the backend's
 * own classifier when it is sure; otherwise a denial keyword in the output (exits 2, 126 and 127
 * excepted) or a death by SIGSYS. Unsandboxed processes are never judged.
 */
export function isSandboxDenied(backend: SandboxBackend, exitCode: number, output: string): boolean {
  if (exitCode === 0) return false;
  let verdict = 'unknown';
  try {
    verdict = backend.classifyDenial?.({ exitCode, output }) ?? 'unknown';
  } catch {
    // A broken classifier must not decide; the heuristic still can.
  }
  if (verdict === 'denied') return true;
  if (verdict === 'not_denied') return false;
  if (exitCode === SIGSYS_EXIT) return true;
  if (ORDINARY_FAILURES.has(exitCode)) return false;
  const lower = output.toLowerCase();
  return KEYWORDS.some((keyword) => lower.includes(keyword));
}
