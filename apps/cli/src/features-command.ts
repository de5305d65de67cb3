import {
  type ConfigOverride,
  type ResolvedFeatures,
  resolveFeatures,
  resolveReviewSettings,
} from '@ux/config';
import {
  describeAssignment,
  FEATURE_DEFINITIONS,
  type FeatureAssignment,
  planTools,
  stageLabel,
  type ToolPlan,
} from '@ux/features';
import { execCommandToolDefinition } from '@ux/protocol/core';
import { safeUserShell, zshForkPaths } from './cli-session.js';
import { configPaths, loadConfiguration } from './config-files.js';
import type { Io } from './io.js';
import { asUsageError, parseConfigArguments } from './parse-config-arguments.js';
import { parseOptions } from './parse-options.js';
import { UsageError } from './usage-error.js';

export const FEATURES_HELP = `Usage: ux features <list|explain> [options]

  list      every feature: stage, effective value, and the layer that set it
  explain   how the flags collapse into a mode, and which tools and shell that gives; where
            approval questions go (approvals_via, approval_timeout_s)

Options:
  --enable <feature>    turn a feature on for this run (repeatable)
  --disable <feature>   turn a feature off for this run (repeatable)
  --profile <name>      use [profiles.<name>] from the config
  -c, --config KEY=VALUE  set a config.toml key for this run (repeatable), as ux exec does
  --json                machine-readable output
  -h, --help            this help

Layers, lowest first: built-in defaults, $UX_HOME/config.toml (UX_HOME defaults to ~/.ux),
the selected profile, command-line flags. $UX_REQUIREMENTS (default /etc/ux/requirements.toml)
pins values no other layer can change.
`;

export function featuresCommand(args: string[], io: Io): number {
  const [sub, ...rest] = args;
  if (sub === undefined) {
    io.stderr(FEATURES_HELP);
    return 2;
  }
  if (sub === '-h' || sub === '--help') {
    io.stdout(FEATURES_HELP);
    return 0;
  }
  if (sub !== 'list' && sub !== 'explain') {
    throw new UsageError(`unknown features command "${sub}"; expected list or explain`, 'ux features --help');
  }
  const { values, positionals } = parseFeatureOptions(rest, sub);
  if (values.help) {
    io.stdout(FEATURES_HELP);
    return 0;
  }
  if (positionals.length > 0) {
    throw new UsageError(`unexpected argument "${positionals[0]}"`, 'ux features --help');
  }
  const configuration = loadConfigurationOrUsage(
    io.env,
    parseConfigArguments(values.config, 'ux features --help'),
  );
  const resolved = resolveFeatures({
    platform: io.platform,
    user: configuration.user,
    requirements: configuration.requirements,
    profile: values.profile,
    cli: { enable: values.enable ?? [], disable: values.disable ?? [] },
  });
  const plan = planTools({
    flags: resolved.flags,
    features: resolved.features,
    platform: io.platform,
    userShell: io.env.SHELL || safeUserShell(),
    zshFork: resolved.flags.shell_zsh_fork
      ? zshForkPaths(configPaths(io.env).home, configuration.user?.zshFork)
      : configuration.user?.zshFork,
    allowLoginShell: configuration.user?.allowLoginShell,
  });

  if (sub === 'list') {
    if (values.json) io.stdout(`${JSON.stringify(listJson(resolved), null, 2)}\n`);
    else {
      io.stdout(listText(resolved));
      printWarnings(io, resolved.warnings);
    }
  } else if (values.json) {
    io.stdout(
      `${JSON.stringify({ ...explainJson(resolved, plan), approvals: approvalRouting(configuration) }, null, 2)}\n`,
    );
  } else {
    io.stdout(explainText(resolved, plan) + approvalRoutingText(approvalRouting(configuration)));
    printWarnings(io, [...resolved.warnings, ...plan.warnings]);
  }
  return 0;
}

function parseFeatureOptions(args: string[], sub: string) {
  return parseOptions(
    args,
    {
      enable: { type: 'string', multiple: true },
      disable: { type: 'string', multiple: true },
      profile: { type: 'string' },
      config: { type: 'string', short: 'c', multiple: true },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    'ux features --help',
    { commandLine: `ux features ${sub}` },
  );
}

function sourceText(assignment: FeatureAssignment): string {
  switch (assignment.layer) {
    case 'default':
      return 'default';
    case 'cli':
      return `command line (${assignment.flag})`;
    default:
      return `${assignment.layer === 'profile' ? `profile ${assignment.profile}` : assignment.layer} (${describeAssignment(assignment)})`;
  }
}

function sourceJson(assignment: FeatureAssignment) {
  return {
    layer: assignment.layer,
    enabled: assignment.enabled,
    ...(assignment.location
      ? { file: assignment.location.file, line: assignment.location.line, column: assignment.location.column }
      : {}),
    ...(assignment.flag ? { flag: assignment.flag } : {}),
    ...(assignment.profile ? { profile: assignment.profile } : {}),
  };
}

function listJson(resolved: ResolvedFeatures) {
  return {
    platform: resolved.platform,
    profile: resolved.profile ?? null,
    features: [
      ...resolved.features.map((feature) => ({
        key: feature.key,
        stage: feature.stage,
        enabled: feature.enabled,
        description: feature.description,
        source: sourceJson(feature.source),
        overridden: feature.overridden.map(sourceJson),
      })),
      ...FEATURE_DEFINITIONS.filter((definition) => definition.stage === 'removed').map((definition) => ({
        key: definition.key,
        stage: definition.stage,
        enabled: false,
        description: definition.description,
        source: null,
        overridden: [],
      })),
    ],
    warnings: resolved.warnings,
  };
}

function listText(resolved: ResolvedFeatures): string {
  const rows = [
    ['FEATURE', 'STAGE', 'ENABLED', 'SOURCE'],
    ...resolved.features.map((f) => [f.key, stageLabel(f.stage), String(f.enabled), sourceText(f.source)]),
    ...FEATURE_DEFINITIONS.filter((d) => d.stage === 'removed').map((d) => [
      d.key,
      'removed',
      '-',
      'ignored',
    ]),
  ];
  const header = resolved.profile
    ? `profile: ${resolved.profile.name} (chosen by ${resolved.profile.chosenBy})\n`
    : '';
  return header + table(rows);
}

function explainJson(resolved: ResolvedFeatures, plan: ToolPlan) {
  return {
    mode: plan.mode,
    flags: resolved.flags,
    tools: plan.tools,
    shell: plan.shell,
    execCommandParameters: plan.tools.includes('exec_command') ? execCommandParameters(plan) : [],
    reasons: plan.reasons,
    modeReasons: plan.modeReasons,
    warnings: [...resolved.warnings, ...plan.warnings],
    profile: resolved.profile ?? null,
  };
}

function explainText(resolved: ResolvedFeatures, plan: ToolPlan): string {
  const flags = ['shell_tool', 'unified_exec', 'shell_zsh_fork', 'unified_exec_zsh_fork'].map((key) => {
    const feature = resolved.features.find((f) => f.key === key)!;
    return [`  ${key}`, feature.enabled ? 'on' : 'off', sourceText(feature.source)];
  });
  const lines = [
    `Mode: ${plan.mode}`,
    '',
    'Flags:',
    table(flags).trimEnd(),
    '',
    'Plan:',
    ...plan.reasons.map((reason) => `  ${reason}`),
  ];
  if (plan.tools.includes('exec_command'))
    lines.push(`  exec_command parameters: ${execCommandParameters(plan).join(', ')}`);
  return `${lines.join('\n')}\n`;
}

/** `approvals_via` and `approval_timeout_s` with where each was set, or the configuration's mistake. */
function approvalRouting(configuration: ReturnType<typeof loadConfiguration>) {
  try {
    const review = resolveReviewSettings({
      user: configuration.user,
      requirements: configuration.requirements,
    });
    return { approvalsVia: review.approvalsVia, approvalTimeoutS: review.approvalTimeoutS };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

function approvalRoutingText(routing: ReturnType<typeof approvalRouting>): string {
  if ('error' in routing) return `\nApprovals:\n  ${routing.error}\n`;
  const pinned = (setting: { pinned: boolean }) => (setting.pinned ? ', pinned by the requirements' : '');
  return `\nApprovals:\n${table([
    [
      '  approvals_via',
      routing.approvalsVia.value,
      `${routing.approvalsVia.source}${pinned(routing.approvalsVia)}`,
    ],
    [
      '  approval_timeout_s',
      routing.approvalTimeoutS.value === null ? 'none (wait)' : String(routing.approvalTimeoutS.value),
      `${routing.approvalTimeoutS.source}${pinned(routing.approvalTimeoutS)}`,
    ],
  ])}`;
}

/** The parameter names of the schema the model would be given. */
function execCommandParameters(plan: ToolPlan): string[] {
  const schema = execCommandToolDefinition(plan.execCommandVariant).parameters as {
    properties: Record<string, unknown>;
  };
  return Object.keys(schema.properties);
}

function printWarnings(io: Io, warnings: readonly string[]): void {
  for (const warning of warnings) io.stderr(`ux: warning: ${warning}\n`);
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return `${rows
    .map((row) =>
      row
        .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}

/** The configuration, with a mistake in a `-c` value reported as the command line's. */
function loadConfigurationOrUsage(env: NodeJS.ProcessEnv, overrides: ConfigOverride[]) {
  try {
    return loadConfiguration(env, overrides);
  } catch (error) {
    throw asUsageError(error, 'ux features --help');
  }
}
