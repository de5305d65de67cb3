import type { DenialEvidence, DenialVerdict } from '@ux/protocol/core';

const SIGSYS_EXIT = 128 + 31;
/** What a Landlock or seccomp refusal makes programs print (EACCES, EPERM, EXDEV for a refused rename). */
const DENIAL_MARKS = [
  'permission denied',
  'operation not permitted',
  'invalid cross-device link',
  'network is unreachable',
  'temporary failure in name resolution',
  'could not resolve host',
];
/** What `ux-landlock-exec` prints, with exit status 125, when it cannot set the sandbox up. */
const SETUP_FAILED_EXIT = 125;

/**
 * The Landlock backend's reading of an exit: EACCES, EPERM, EXDEV and network failures are denials, as
 * is a seccomp kill (exit 159). A failure of the launcher itself (exit 125, `ux: sandbox setup failed:
 * …`) is not: the command never ran, so offering to run it without the sandbox would be the wrong answer.
 */
export function classifyLandlockDenial(evidence: DenialEvidence): DenialVerdict {
  if (evidence.exitCode === 0) return 'not_denied';
  const output = evidence.output.toLowerCase();
  if (evidence.exitCode === SETUP_FAILED_EXIT && /^ux: sandbox setup failed: /m.test(output))
    return 'not_denied';
  if (evidence.exitCode === SIGSYS_EXIT || evidence.signal === 'SIGSYS') return 'denied';
  return DENIAL_MARKS.some((mark) => output.includes(mark)) ? 'denied' : 'unknown';
}
