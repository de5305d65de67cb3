import type { DenialEvidence, DenialVerdict } from '@ux/protocol/core';

/**
 * Recognises what Seatbelt leaves behind: `sandbox-exec:` errors (a profile it refused, or a nested
 * sandbox), kernel log lines (`Sandbox: cat(123) deny(1) file-read-data …`), and `Operation not permitted`
 * (EPERM, how a blocked file or socket call fails on macOS). An exit code 0 is never a denial; anything
 * else is left to the generic heuristic.
 */
export function classifySeatbeltDenial(evidence: DenialEvidence): DenialVerdict {
  if (evidence.exitCode === 0) return 'not_denied';
  const output = evidence.output;
  if (/^sandbox-exec: /m.test(output)) return 'denied';
  if (/\bdeny\(\d+\) [a-z*-]+/.test(output)) return 'denied';
  if (/operation not permitted/i.test(output) || /\bEPERM\b/.test(output)) return 'denied';
  return 'unknown';
}
