import {
  type ApprovalPolicy,
  type ApprovalPolicyName,
  approvalPolicyName,
  formatLocation,
  granularApprovalConfig,
  type SandboxMode,
} from '@ux/protocol/core';
import { checkRequirements, type Requirements } from './requirements.js';
import { type EnvironmentResolution, resolveEnvironments } from './resolve-environments.js';
import {
  type NetworkChoices,
  type ResolvedNetwork,
  resolveNetwork,
  type UnixSocketEntry,
} from './resolve-network.js';
import type { Located, ShellEnvironmentPolicy, WorkspaceWriteSettings } from './session-settings.js';
import type { SourceLocation } from './toml-document.js';
import type { UserConfig } from './user-config.js';

export interface ResolveSessionInput {
  user?: UserConfig;
  requirements?: Requirements;
  /** The profile in effect (as `resolveFeatures` chose it). */
  profile?: string;
  /** Command-line choices, with the flag that made them (`--approval never`). */
  cli?: {
    approvalPolicy?: { value: ApprovalPolicy; flag: string };
    sandboxMode?: { value: SandboxMode; flag: string };
    /** `--writable-root`: absolute directories added to the workspace-write roots. */
    writableRoots?: string[];
    /** `--network` / `--no-network`. */
    network?: NetworkChoices['network'];
    /** `--allow-domain HOST`, one entry per flag (a valid pattern). */
    allowDomains?: NetworkChoices['allowDomains'];
    /** `--allow-unix-socket PATH`, absolute, one entry per flag. */
    allowUnixSockets?: NetworkChoices['allowUnixSockets'];
    /** `--deny-read`, one entry per flag, as written. */
    denyRead?: { value: string; flag: string }[];
    /** `--env NAME`: the environment to start in, over `default_environment`. */
    environment?: { value: string; flag: string };
  };
  /** The home directory `~/…` in `allow_unix_sockets` stands for; entries stay as written without it. */
  homeDir?: string;
}

/** A path or glob sandboxed commands may not read, as written, and who asked for it. */
export interface DenyReadEntry {
  pattern: string;
  /** `file:line:column`, or the flag (`--deny-read ~/.ssh`). */
  source: string;
  /** Where a config or requirements file wrote it; absent for flags. */
  location?: SourceLocation;
}

/** A setting and who chose it: `default`, a flag, or `file:line:column`. */
export interface Chosen<T> {
  value: T;
  source: string;
}

export interface SessionResolution extends EnvironmentResolution {
  approvalPolicy: Chosen<ApprovalPolicy>;
  sandboxMode: Chosen<SandboxMode>;
  workspaceWrite: WorkspaceWriteSettings;
  environment: ShellEnvironmentPolicy;
  rules: string[];
  /** Backends the config enables, in order; undefined means every registered one. */
  enabledBackends?: Chosen<string[]>;
  /** Backends the requirements allow; undefined means any. */
  allowedBackends?: string[];
  /**
   * The network of the sandbox mode in effect: its table's `network` (default off), `--network`,
   * `--no-network` and `--allow-domain` over it, within the requirements' cap.
   */
  network: ResolvedNetwork;
  /** Unix sockets sandboxed commands may connect to: the mode's table, then `--allow-unix-socket`. */
  allowUnixSockets: UnixSocketEntry[];
  /** Requirements first (no layer can drop them), then config, then flags. */
  denyRead: DenyReadEntry[];
}

export const DEFAULT_SANDBOX_MODE: SandboxMode = 'workspace-write';

/**
 * The session's approval policy, sandbox mode and the rest: defaults < user config < profile <
 * command line, and the environments commands may run in (`resolveEnvironments`). A choice the managed
 * requirements do not allow is a `ConfigError` naming both the
 * choice's source and the requirements file; a default they do not allow gives way to the first value
 * they do.
 */
export function resolveSessionSettings(input: ResolveSessionInput): SessionResolution {
  const top = input.user?.session ?? {};
  const profile = input.profile ? input.user?.profiles[input.profile]?.session : undefined;
  const requirements = input.requirements;

  const approvalPolicy = pick(
    input.cli?.approvalPolicy,
    profile?.approvalPolicy,
    top.approvalPolicy,
    defaultApprovalPolicy(requirements?.allowedApprovalPolicies?.values),
  );
  const sandboxMode = pick(
    input.cli?.sandboxMode,
    profile?.sandboxMode,
    top.sandboxMode,
    (requirements?.allowedSandboxModes?.values ?? [DEFAULT_SANDBOX_MODE]).includes(DEFAULT_SANDBOX_MODE)
      ? DEFAULT_SANDBOX_MODE
      : requirements!.allowedSandboxModes!.values[0]!,
  );
  const enabledBackends = top.sandboxBackends && {
    value: top.sandboxBackends.value,
    source: where(top.sandboxBackends.location),
  };

  checkRequirements(requirements, {
    approvalPolicy: {
      value: approvalPolicyName(approvalPolicy.value) as ApprovalPolicyName,
      source: approvalPolicy.source,
    },
    sandboxMode: sandboxMode,
  });
  for (const id of enabledBackends?.value ?? []) {
    checkRequirements(requirements, { sandboxBackend: { value: id, source: enabledBackends!.source } });
  }

  const environments = resolveEnvironments({
    user: input.user,
    requirements,
    profile: input.profile,
    cli: input.cli?.environment,
  });

  const { network, allowUnixSockets } = resolveNetwork({
    sandboxMode,
    table:
      sandboxMode.value === 'workspace-write'
        ? top.workspaceWrite?.value
        : sandboxMode.value === 'read-only'
          ? top.readOnly?.value
          : undefined,
    requirements,
    cli: {
      ...(input.cli?.network ? { network: input.cli.network } : {}),
      ...(input.cli?.allowDomains ? { allowDomains: input.cli.allowDomains } : {}),
      ...(input.cli?.allowUnixSockets ? { allowUnixSockets: input.cli.allowUnixSockets } : {}),
    },
    ...(input.homeDir === undefined ? {} : { homeDir: input.homeDir }),
  });

  const workspaceWrite = top.workspaceWrite?.value ?? {
    writableRoots: [],
    networkAccess: false,
    excludeTmpdirEnvVar: false,
    excludeSlashTmp: false,
    privateTmp: true,
  };
  const denyRead: DenyReadEntry[] = [
    ...fromFile(requirements?.denyRead?.values, requirements?.denyRead?.location),
    ...fromFile(top.denyRead?.value, top.denyRead?.location),
    ...(input.cli?.denyRead ?? []).map(({ value, flag }) => ({ pattern: value, source: flag })),
  ];
  return {
    approvalPolicy,
    sandboxMode,
    workspaceWrite: {
      ...workspaceWrite,
      writableRoots: [...new Set([...workspaceWrite.writableRoots, ...(input.cli?.writableRoots ?? [])])],
    },
    environment: top.shellEnvironmentPolicy?.value ?? {},
    rules: top.rules?.value ?? [],
    enabledBackends,
    allowedBackends: requirements?.allowedSandboxBackends?.values,
    network,
    allowUnixSockets,
    denyRead,
    ...environments,
  };
}

function fromFile(
  patterns: readonly string[] | undefined,
  location: SourceLocation | undefined,
): DenyReadEntry[] {
  if (!patterns || !location) return [];
  return patterns.map((pattern) => ({ pattern, source: where(location), location }));
}

function pick<T>(
  cli: { value: T; flag: string } | undefined,
  profile: Located<T> | undefined,
  user: Located<T> | undefined,
  fallback: T,
): Chosen<T> {
  if (cli) return { value: cli.value, source: cli.flag };
  if (profile) return { value: profile.value, source: where(profile.location) };
  if (user) return { value: user.value, source: where(user.location) };
  return { value: fallback, source: 'default' };
}

function defaultApprovalPolicy(allowed: readonly ApprovalPolicyName[] | undefined): ApprovalPolicy {
  const name = allowed === undefined || allowed.includes('on-request') ? 'on-request' : allowed[0]!;
  return name === 'granular' ? { granular: granularApprovalConfig() } : name;
}

function where(location: SourceLocation): string {
  return formatLocation(location);
}
