export { checkSeatbeltProfile } from './check-seatbelt-profile.js';
export { classifySeatbeltDenial } from './classify-seatbelt-denial.js';
export { macosPath, withPrivatePrefix } from './macos-path.js';
export { OUTER_SANDBOX_MARKERS, outerSandboxMarker } from './outer-sandbox.js';
export { parseSbpl, type SbplNode, SbplSyntaxError } from './parse-sbpl.js';
export {
  nodeSeatbeltProbeHost,
  probeSeatbelt,
  SEATBELT_ENFORCES,
  type SeatbeltProbeHost,
} from './probe-seatbelt.js';
export { sandboxPlugin } from './sandbox-plugin.js';
export { type GlobParts, sbplGlobRegex, splitGlob } from './sbpl-glob-regex.js';
export { sbplPathRegex } from './sbpl-path-regex.js';
export { SBPL_STRING_MAX_BYTES } from './sbpl-text.js';
export {
  SEATBELT_BASE_POLICY,
  SEATBELT_NETWORK_POLICY,
  SEATBELT_PLATFORM_DEFAULTS_POLICY,
  SEATBELT_PTY_POLICY,
} from './seatbelt-base-policy.js';
export {
  planSeatbelt,
  SANDBOX_EXEC_PATH,
  type SeatbeltHostFacts,
  type SeatbeltPlan,
} from './seatbelt-plan.js';
export {
  renderSeatbeltProfile,
  type SeatbeltProfile,
  type SeatbeltProfileOptions,
} from './seatbelt-profile.js';
export {
  type SeatbeltDeniedGlob,
  type SeatbeltExcludedPath,
  type SeatbeltHostPath,
  type SeatbeltMoveGuard,
  type SeatbeltReadRule,
  type SeatbeltRules,
  type SeatbeltRulesOptions,
  type SeatbeltUngrantedRoot,
  type SeatbeltWritableRoot,
  seatbeltRules,
} from './seatbelt-rules.js';
export { createSeatbeltSandbox, type SeatbeltSandboxSettings } from './seatbelt-sandbox.js';
export {
  formatSeatbeltViolations,
  parseSeatbeltViolation,
  type SeatbeltViolation,
} from './seatbelt-violation.js';
export {
  createSeatbeltViolationCollector,
  type LogStreamProcess,
  type SeatbeltViolationCollector,
  type SeatbeltViolationCollectorOptions,
} from './seatbelt-violation-collector.js';
