/**
 * Lifecycle of a feature: `under_development` (off, may break), `experimental` (try it), `stable`,
 * `deprecated` (still works, going away), `removed` (accepted in config, ignored with a warning).
 */
export type FeatureStage = 'under_development' | 'experimental' | 'stable' | 'deprecated' | 'removed';

export interface FeatureDefinition {
  key: string;
  stage: FeatureStage;
  description: string;
  /** The built-in value on a platform. */
  defaultEnabled: (platform: NodeJS.Platform) => boolean;
  /** Older names accepted in config, with a warning to use `key`. */
  legacyKeys?: readonly string[];
  /** For removed features: what replaced it. */
  removedNote?: string;
}

export const FEATURE_DEFINITIONS = [
  {
    key: 'shell_tool',
    stage: 'stable',
    description: 'Give the model a shell tool at all.',
    defaultEnabled: () => true,
  },
  {
    key: 'unified_exec',
    stage: 'stable',
    description: 'Offer exec_command and write_stdin: long-lived processes, PTYs, polling across turns.',
    // Off on Windows by default, as upstream: ConPTY support is the open question there.
    defaultEnabled: (platform) => platform !== 'win32',
    legacyKeys: ['experimental_use_unified_exec_tool'],
  },
  {
    key: 'shell_zsh_fork',
    stage: 'under_development',
    description: 'Run commands through the patched zsh that intercepts each execve for approval.',
    defaultEnabled: () => false,
  },
  {
    key: 'unified_exec_zsh_fork',
    stage: 'under_development',
    description:
      'Allow unified_exec and shell_zsh_fork, when both are on, to compose into zsh-fork mode. Enables nothing by itself.',
    defaultEnabled: () => false,
  },
  {
    key: 'exec_permission_approvals',
    stage: 'under_development',
    description: 'Let exec_command ask for additional sandboxed permissions (with_additional_permissions).',
    defaultEnabled: () => false,
  },
  {
    key: 'shell_snapshot',
    stage: 'stable',
    description:
      "Capture the user's login shell once per session (variables, aliases, functions, options) and source it for every command instead of running the login files each time.",
    defaultEnabled: () => true,
  },
  {
    key: 'streamable_shell',
    stage: 'removed',
    description: 'The earlier streaming shell tool.',
    defaultEnabled: () => false,
    removedNote: 'superseded by unified_exec',
  },
] as const satisfies readonly FeatureDefinition[];

export type FeatureKey = (typeof FEATURE_DEFINITIONS)[number]['key'];

/** Features that still exist (every stage but `removed`). */
export type ActiveFeatureKey = Exclude<FeatureKey, 'streamable_shell'>;

const BY_KEY = new Map<string, FeatureDefinition>(
  FEATURE_DEFINITIONS.map((feature) => [feature.key, feature]),
);
const BY_LEGACY_KEY = new Map<string, FeatureDefinition>(
  FEATURE_DEFINITIONS.flatMap((feature: FeatureDefinition) =>
    (feature.legacyKeys ?? []).map((legacy) => [legacy, feature]),
  ),
);

/** Looks a name up as a current key or a legacy alias. */
export function findFeature(name: string): { definition: FeatureDefinition; legacy: boolean } | undefined {
  const current = BY_KEY.get(name);
  if (current) return { definition: current, legacy: false };
  const legacy = BY_LEGACY_KEY.get(name);
  return legacy ? { definition: legacy, legacy: true } : undefined;
}

export function featureKeys(): FeatureKey[] {
  return FEATURE_DEFINITIONS.map((feature) => feature.key);
}

/** Human wording of a stage. */
export function stageLabel(stage: FeatureStage): string {
  return stage.replace('_', ' ');
}
