import type { DenialEvidence, DenialVerdict } from '@ux/protocol/core';

const SIGSYS_EXIT = 128 + 31;
const DENIAL_MARKS = [
  'read-only file system',
  'operation not permitted',
  'permission denied',
  'network is unreachable',
  'temporary failure in name resolution',
  'could not resolve host',
];

/** What `ux-sandbox-exec` prints, with exit status 125, when it cannot set the sandbox up. */
const SETUP_FAILED_EXIT = 125;

/**
 * bwrap's own reading of an exit (docs/reference/sandbox.md §9): EROFS, EPERM, EACCES and network
 * failures are denials, as is a seccomp kill (exit 159). A failure of bwrap itself (`bwrap: …`), or of
 * `ux-sandbox-exec` setting up the filter, the proxy bridge or the connect supervisor (exit 125,
 * `ux: sandbox setup failed: …`), is not: the command did not run, so offering to run it without the
 * sandbox would be the wrong answer.
 */
export function classifyBwrapDenial(evidence: DenialEvidence): DenialVerdict {
  if (evidence.exitCode === 0) return 'not_denied';
  const output = evidence.output.toLowerCase();
  if (/^bwrap: /m.test(output)) return 'not_denied';
  if (evidence.exitCode === SETUP_FAILED_EXIT && /^ux: sandbox setup failed: /m.test(output))
    return 'not_denied';
  if (evidence.exitCode === SIGSYS_EXIT || evidence.signal === 'SIGSYS') return 'denied';
  return DENIAL_MARKS.some((mark) => output.includes(mark)) ? 'denied' : 'unknown';
}
