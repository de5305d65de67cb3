import { formatLocation } from '@ux/protocol/core';
import type { ActiveFeatureKey, FeatureKey, FeatureStage } from './feature-registry.js';

/** Which layer of configuration set a value. Lower layers come first; `managed` (the requirements) wins. */
export type FeatureLayer = 'default' | 'user' | 'profile' | 'cli' | 'managed';

/** One value a layer gives a feature, and where it was written. */
export interface FeatureAssignment {
  key: FeatureKey;
  enabled: boolean;
  layer: FeatureLayer;
  /** Where: a file position (`-c key=value` has a file and no line), or a command-line flag. */
  location?: { file: string; line?: number; column?: number };
  /** The command-line flag that set it (`--enable unified_exec`). */
  flag?: string;
  /** The profile name for the `profile` layer. */
  profile?: string;
}

/** A feature's effective value and every layer that had a say (what `resolveFeatures` of `@ux/config` gives). */
export interface ResolvedFeature {
  key: FeatureKey;
  stage: FeatureStage;
  description: string;
  enabled: boolean;
  /** The layer whose value won. */
  source: FeatureAssignment;
  /** Values from lower layers that a higher one replaced, lowest first. */
  overridden: FeatureAssignment[];
}

/** The value of every active feature, by key. */
export type FeatureFlags = Record<ActiveFeatureKey, boolean>;

/** "features.unified_exec = false in /home/u/.ux/config.toml:3:1", "--disable unified_exec", "the default (true)". */
export function describeAssignment(assignment: FeatureAssignment): string {
  if (assignment.flag) return assignment.flag;
  if (!assignment.location) return `the default (${assignment.enabled})`;
  const key =
    assignment.layer === 'profile'
      ? `profiles.${assignment.profile}.features.${assignment.key}`
      : `features.${assignment.key}`;
  return `${key} = ${assignment.enabled} in ${formatLocation(assignment.location)}`;
}
