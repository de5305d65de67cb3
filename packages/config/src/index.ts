export { applyConfigOverrides } from './apply-config-overrides.js';
export { chooseEnvironment, type EnvironmentChoices } from './choose-environment.js';
export { denyReadProblem, GLOB_CHARACTERS, parseDenyReadEntries } from './deny-read-entries.js';
export {
  ENVIRONMENT_NAME,
  type EnvironmentConfig,
  LOCAL_ENVIRONMENT_ID,
  parseEnvironments,
  type RemoteEnvironmentConfig,
  toolPlanEnvironments,
} from './environment-config.js';
export { type FeatureTable, parseFeatureTable } from './feature-table.js';
export {
  domainPatternCovers,
  domainPatternProblem,
  type NetworkMode,
  type NetworkPatternEntry,
  type NetworkSetting,
  parseNetworkSetting,
  parseUnixSocketEntries,
  unixSocketProblem,
} from './network-setting.js';
export {
  type ConfigOverride,
  configOverrideLabel,
  isConfigOverrideLabel,
  parseConfigOverride,
} from './parse-config-override.js';
export {
  checkRequirements,
  parseRequirements,
  type RequirementChoice,
  type Requirements,
} from './requirements.js';
export {
  type EnvironmentResolution,
  type ResolveEnvironmentsInput,
  resolveEnvironments,
} from './resolve-environments.js';
export { type ResolvedFeatures, type ResolveFeaturesInput, resolveFeatures } from './resolve-features.js';
export {
  expandHome,
  type NetworkChoices,
  type NetworkListEntry,
  type ResolvedNetwork,
  type ResolveNetworkInput,
  resolveNetwork,
  type UnixSocketEntry,
} from './resolve-network.js';
export {
  type ResolvedReviewCommand,
  type ReviewResolution,
  resolveReviewSettings,
} from './resolve-review-settings.js';
export {
  type Chosen,
  DEFAULT_SANDBOX_MODE,
  type DenyReadEntry,
  type ResolveSessionInput,
  resolveSessionSettings,
  type SessionResolution,
} from './resolve-session-settings.js';
export {
  type ApprovalsReviewer,
  type ApprovalsVia,
  approvalsReviewers,
  approvalsVias,
  DEFAULT_APPROVALS_VIA,
  DEFAULT_AUTO_REVIEW_TIMEOUT_SECONDS,
  DEFAULT_HOOK_TIMEOUT_SECONDS,
  MAX_APPROVAL_TIMEOUT_SECONDS,
  MAX_REVIEW_TIMEOUT_SECONDS,
  parseReviewConfig,
  type ReviewCommandConfig,
  type ReviewConfig,
} from './review-settings.js';
export {
  isPluginPath,
  parseSandboxPluginList,
  parseSandboxTables,
  pluginSpecifierProblem,
  type SandboxSettingsTable,
} from './sandbox-plugin-config.js';
export { sandboxPolicyFor, sessionEffectivePolicy } from './session-effective-policy.js';
export {
  type Located,
  PROFILE_SESSION_KEYS,
  parseSessionSettings,
  type ReadOnlySettings,
  type SandboxNetworkSettings,
  SESSION_KEYS,
  type SessionSettings,
  type ShellEnvironmentPolicy,
  type WorkspaceWriteSettings,
} from './session-settings.js';
export {
  everyConfigError,
  formatKeyPath,
  parseTomlDocument,
  type SourceLocation,
  type TomlDocument,
} from './toml-document.js';
export { parseUserConfig, type UserConfig } from './user-config.js';
