export {
  type BwrapHost,
  type BwrapPlan,
  LINUX_MINIMAL_READ_ROOTS,
  type MountTarget,
  planBwrap,
} from './bwrap-plan.js';
export { classifyBwrapDenial } from './classify-bwrap-denial.js';
export { type BwrapSandboxSettings, createBwrapSandbox } from './create-bwrap-sandbox.js';
export { findBwrap } from './find-bwrap.js';
export { explainFailure } from './probe-bwrap.js';
export { buildSeccompProgram, type SeccompRule, seccompRules } from './seccomp/seccomp-program.js';
