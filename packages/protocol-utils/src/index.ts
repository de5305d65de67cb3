// `@ux/protocol-utils`: the runtime helpers built on the contract of `@ux/protocol` — wire codecs,
// output buffers, policy evaluation and the sandbox layout, sandbox selection, runtime directories
// and text helpers. It imports only `@ux/protocol/core`, so nothing here loads a schema library.
export { decodeEnvPolicy, encodeEnvPolicy } from './exec-server/env-policy-codec.js';
export { fileUriFromPath, pathFromFileUri } from './exec-server/file-uri.js';
export { LineSplitter } from './exec-server/line-splitter.js';
export {
  type DecodedSandboxContext,
  decodeSandboxContext,
  encodeSandboxContext,
} from './exec-server/sandbox-context-codec.js';
export {
  NO_PROXY_HOSTS,
  PROXY_BRIDGE_PORT,
  type ProxyEnvironmentOptions,
  proxyEnvironment,
} from './network/proxy-environment.js';
export { HeadTailBuffer } from './output/head-tail-buffer.js';
export { OutputHub } from './output/output-hub.js';
export {
  applyShellEnvironmentPolicy,
  excludedByShellEnvironmentPolicy,
} from './policy/apply-shell-environment-policy.js';
export {
  createRepositoryScanCache,
  type FindRepositoriesOptions,
  type FoundRepositories,
  findRepositories,
} from './policy/find-repositories.js';
export { type FsView, memoryFsView, nodeFsView } from './policy/fs-view.js';
export { globToRegExp } from './policy/glob-to-regexp.js';
export { gitdirTarget } from './policy/protected-paths.js';
export { type PolicyContext, resolveEntries } from './policy/resolve-entries.js';
export {
  canonicalize,
  isUnder,
  protectedEntryFor,
  resolveSandboxLayout,
  type SandboxLayout,
} from './policy/sandbox-layout.js';
export { privateTmpDir } from './runtime/private-tmp-dir.js';
export {
  createProcessRuntimeDir,
  ensureUxRuntimeRoot,
  runtimeDirPid,
  uxRuntimeRoot,
  uxRuntimeRoots,
} from './runtime/ux-runtime-dir.js';
export { checkPosixPlanRequest } from './sandbox/check-posix-plan-request.js';
export { probeSafely } from './sandbox/probe-safely.js';
export { isSandboxDenial } from './sandbox/sandbox-denial.js';
export { createSandboxRegistry, type SandboxRegistry } from './sandbox/sandbox-registry.js';
export {
  type ConsideredBackend,
  checkSandboxBackendIds,
  type SandboxSelection,
  sandboxCandidates,
  sandboxSelectionError,
  selectSandboxBackend,
} from './sandbox/select-sandbox-backend.js';
export { prependPathLine } from './text/prepend-path-line.js';
export { readableText, visibleJson } from './text/readable-text.js';
export { hasInvisibleText, visibleText } from './text/visible-text.js';
export { windowsArgumentsLine, windowsCommandLine } from './text/windows-command-line.js';
export {
  describePolicyForModel,
  type PolicyAsker,
  type PolicyForModel,
  withPolicyText,
} from './tools/describe-policy-for-model.js';
