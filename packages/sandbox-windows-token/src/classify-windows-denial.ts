import type { DenialEvidence, DenialVerdict } from '@ux/protocol/core';

const FILE_DENIALS = [
  /access is denied/i,
  /access to the path .+ is denied/i,
  /\bERROR_ACCESS_DENIED\b/,
  /0x80070005/i,
  /UnauthorizedAccessException/,
  /\bEPERM: operation not permitted\b/,
  /\bEACCES: permission denied\b/,
];
const NETWORK_DENIALS = [
  /\bWSAEACCES\b/,
  /\b10013\b/,
  /forbidden by its access permissions/i,
  // The advisory block: proxies point at the closed discard port.
  /127\.0\.0\.1:9\b/,
];

/**
 * Recognises what the restricted token leaves behind: "Access is denied" (ERROR_ACCESS_DENIED, 5,
 * 0x80070005) in its Win32, .NET and Node spellings; socket access errors (WSAEACCES 10013); a refused
 * connection to the closed proxy port; and the launcher's own failures. Exit 0 is never a denial;
 * anything else is left to the generic heuristic.
 */
export function classifyWindowsDenial(evidence: DenialEvidence): DenialVerdict {
  if (evidence.exitCode === 0) return 'not_denied';
  const output = evidence.output;
  if (/^ux-windows-token: /m.test(output)) return 'denied';
  if (FILE_DENIALS.some((pattern) => pattern.test(output))) return 'denied';
  if (NETWORK_DENIALS.some((pattern) => pattern.test(output))) return 'denied';
  return 'unknown';
}
