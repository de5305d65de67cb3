export {
  type ApplyPatchFileSystem,
  type ApplyPatchOptions,
  applyPatch,
  applyPlan,
} from './apply-patch.js';
export {
  ApplyPatchError,
  type ApplyPatchErrorFields,
  type ApplyPatchErrorReason,
} from './apply-patch-error.js';
export { formatPatchSummary } from './format-patch-summary.js';
export { noFollowFileSystem } from './no-follow-file-system.js';
export {
  type ApplyPatchInvocation,
  parseApplyPatchInvocation,
} from './parse-apply-patch-invocation.js';
export {
  type ParsedPatch,
  type PatchHunk,
  type PatchLine,
  type PatchOperation,
  parsePatch,
} from './parse-patch.js';
export {
  describeIoError,
  type PatchChangeKind,
  type PatchPlan,
  type PlannedChange,
  type PlannedWrite,
  type PlanPatchOptions,
  planPatch,
} from './plan-patch.js';
export { MAX_PATCH_FILE_BYTES, readRegularFile, readTextFile } from './read-text-file.js';
export { normalisePunctuation, seekSequence } from './seek-sequence.js';
export { type PatchSummary, type PatchSummaryChange, summarizePatch } from './summarize-patch.js';
export { touchedPaths } from './touched-paths.js';
export { detectEol, splitLines, updateFileContents } from './update-file-contents.js';
