export {
  describeAssignment,
  type FeatureAssignment,
  type FeatureFlags,
  type FeatureLayer,
  type ResolvedFeature,
} from './feature-assignment.js';
export {
  collapseFeatureMode,
  explainFeatureMode,
  type FeatureModeDecision,
  type ModeFlagKey,
  type ModeFlags,
  type ModeInput,
  type ModeProvenance,
  type ModeReason,
  type ModeStep,
  reasonText,
  type UnifiedExecMode,
} from './feature-mode.js';
export {
  type ActiveFeatureKey,
  FEATURE_DEFINITIONS,
  type FeatureDefinition,
  type FeatureKey,
  type FeatureStage,
  featureKeys,
  findFeature,
  stageLabel,
} from './feature-registry.js';
export { planTools, type ShellMode, type ToolPlan, type ToolPlanInput } from './tool-plan.js';
