import {
  describeAssignment,
  FEATURE_DEFINITIONS,
  type FeatureAssignment,
  type FeatureDefinition,
  type FeatureFlags,
  type FeatureKey,
  type FeatureLayer,
  featureKeys,
  findFeature,
  type ResolvedFeature,
} from '@ux/features';
import { didYouMean, formatLocation, UxError } from '@ux/protocol/core';
import type { Requirements } from './requirements.js';
import type { UserConfig } from './user-config.js';

export interface ResolveFeaturesInput {
  platform: NodeJS.Platform;
  user?: UserConfig;
  /** A profile chosen on the command line; it overrides the config's `profile`. */
  profile?: string;
  cli?: { enable?: readonly string[]; disable?: readonly string[] };
  requirements?: Requirements;
}

export interface ResolvedFeatures {
  platform: NodeJS.Platform;
  /** The profile in effect and who chose it. */
  profile?: { name: string; chosenBy: string };
  features: ResolvedFeature[];
  flags: FeatureFlags;
  warnings: string[];
}

/** The order layers apply in; `managed` is applied last and cannot be overridden. */
const LAYER_ORDER: FeatureLayer[] = ['default', 'user', 'profile', 'cli', 'managed'];

/**
 * Layers built-in defaults < user config < profile < command line, then pins managed values on top.
 * Every value knows which layer set it; a lower value replaced by a managed pin produces a warning
 * naming the file that pinned it.
 */
export function resolveFeatures(input: ResolveFeaturesInput): ResolvedFeatures {
  const warnings: string[] = [...(input.user?.warnings ?? []), ...(input.requirements?.warnings ?? [])];
  const assignments: FeatureAssignment[] = [];

  for (const definition of FEATURE_DEFINITIONS as readonly FeatureDefinition[]) {
    if (definition.stage === 'removed') continue;
    assignments.push({
      key: definition.key as FeatureKey,
      enabled: definition.defaultEnabled(input.platform),
      layer: 'default',
    });
  }
  if (input.user) assignments.push(...input.user.features.assignments);

  const profile = selectProfile(input);
  if (profile && input.user) assignments.push(...input.user.profiles[profile.name]!.features.assignments);

  assignments.push(...cliAssignments(input.cli, warnings));
  if (input.requirements) assignments.push(...input.requirements.features.assignments);

  const features: ResolvedFeature[] = [];
  for (const definition of FEATURE_DEFINITIONS as readonly FeatureDefinition[]) {
    if (definition.stage === 'removed') continue;
    const mine = assignments
      .filter((assignment) => assignment.key === definition.key)
      .sort((a, b) => LAYER_ORDER.indexOf(a.layer) - LAYER_ORDER.indexOf(b.layer));
    const source = mine[mine.length - 1]!;
    const overridden = mine.slice(0, -1);
    features.push({
      key: definition.key as FeatureKey,
      stage: definition.stage,
      description: definition.description,
      enabled: source.enabled,
      source,
      overridden,
    });
    if (source.layer === 'managed') {
      for (const lower of overridden) {
        if (lower.layer !== 'default' && lower.enabled !== source.enabled) {
          warnings.push(
            `${describeAssignment(lower)} is overridden: ${describeAssignment(source)} pins ${definition.key} to ${source.enabled}`,
          );
        }
      }
    }
    if (source.enabled && source.layer !== 'default') {
      if (definition.stage === 'under_development') {
        warnings.push(
          `${definition.key} is under development and may change or break (enabled by ${describeAssignment(source)})`,
        );
      } else if (definition.stage === 'deprecated') {
        warnings.push(
          `${definition.key} is deprecated and will be removed (enabled by ${describeAssignment(source)})`,
        );
      }
    }
  }

  const flags = Object.fromEntries(features.map((feature) => [feature.key, feature.enabled])) as FeatureFlags;
  return { platform: input.platform, profile, features, flags, warnings };
}

function selectProfile(input: ResolveFeaturesInput): ResolvedFeatures['profile'] {
  const names = Object.keys(input.user?.profiles ?? {});
  if (input.profile !== undefined) {
    if (!input.user || !(input.profile in input.user.profiles)) {
      throw new UxError(
        'invalid_arguments',
        `unknown profile "${input.profile}"${didYouMean(input.profile, names)}; ${
          input.user
            ? `profiles defined in ${input.user.file}: ${names.join(', ') || '(none)'}`
            : 'no config file defines profiles'
        }`,
      );
    }
    return { name: input.profile, chosenBy: `--profile ${input.profile}` };
  }
  const chosen = input.user?.profile;
  return chosen ? { name: chosen.name, chosenBy: formatLocation(chosen.location) } : undefined;
}

function cliAssignments(cli: ResolveFeaturesInput['cli'], warnings: string[]): FeatureAssignment[] {
  const result: FeatureAssignment[] = [];
  const seen = new Map<string, string>();
  for (const [flag, enabled] of [
    ['--enable', true],
    ['--disable', false],
  ] as const) {
    for (const name of (enabled ? cli?.enable : cli?.disable) ?? []) {
      const found = findFeature(name);
      if (!found) {
        throw new UxError(
          'invalid_arguments',
          `unknown feature "${name}" for ${flag}${didYouMean(name, featureKeys()) || `; known features: ${featureKeys().join(', ')}`}`,
        );
      }
      const key = found.definition.key;
      const previous = seen.get(key);
      if (previous && previous !== flag)
        throw new UxError('invalid_arguments', `--enable and --disable both name ${key}`);
      seen.set(key, flag);
      if (found.definition.stage === 'removed') {
        warnings.push(
          `${flag} ${name}: feature "${name}" was removed${found.definition.removedNote ? ` (${found.definition.removedNote})` : ''}; ignored`,
        );
        continue;
      }
      if (found.legacy) warnings.push(`${flag} ${name}: legacy name; use ${flag} ${key}`);
      result.push({ key: key as FeatureKey, enabled, layer: 'cli', flag: `${flag} ${name}` });
    }
  }
  return result;
}
