import { existsSync, realpathSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import {
  type ConfigOverride,
  chooseEnvironment,
  type DenyReadEntry,
  GLOB_CHARACTERS,
  planTools,
  type ResolvedFeatures,
  type ReviewResolution,
  resolveFeatures,
  resolveReviewSettings,
  resolveSessionSettings,
  type SessionResolution,
  type ToolPlan,
  toolPlanEnvironments,
} from '@ux/features';
import {
  type ApprovalPolicy,
  ConfigError,
  type EffectivePolicy,
  effectivePolicyFromSandboxPolicy,
  type FileSystemEntry,
  type NetworkProxyEndpoint,
  type SandboxHostContext,
  type SandboxMode,
  type SandboxPolicy,
  UxError,
} from '@ux/protocol/core';
import { defaultWrapperPath, locateZshFork } from '@ux/zsh-fork';
import { configPaths, type LoadedConfiguration, loadConfiguration } from './config-files.js';
import type { Io } from './io.js';
import { SHIPPED_SANDBOX_PLUGINS } from './sandbox-backends.js';
import { type LoadedSandboxPlugins, loadSandboxPlugins } from './sandbox-plugins.js';

/** What the command line chose for this run. */
export interface SessionFlags {
  approvalPolicy?: ApprovalPolicy;
  sandboxMode?: SandboxMode;
  /** The option that chose the sandbox mode, for messages (default `--sandbox`). */
  sandboxOption?: string;
  profile?: string;
  enable?: string[];
  disable?: string[];
  /** `--writable-root`, absolute. */
  writableRoots?: string[];
  /** `--network` (true) or `--no-network` (false). */
  network?: boolean;
  /** `--allow-domain HOST`, as written (valid patterns). */
  allowDomains?: string[];
  /** `--allow-unix-socket PATH`, absolute. */
  allowUnixSockets?: string[];
  /** `--deny-read`, as written. */
  denyRead?: string[];
  /** `-c key=value`, written over config.toml. */
  configOverrides?: ConfigOverride[];
  /** `--env NAME`: the environment commands run in when a call does not say. */
  environment?: string;
}

/** Everything a command needs from configuration, resolved once. */
export interface CliSession {
  configuration: LoadedConfiguration;
  /** What the command line chose (the resolution below already has it; kept for messages). */
  flags: SessionFlags;
  features: ResolvedFeatures;
  settings: SessionResolution;
  /** Permission hooks, who reviews approvals and the `[auto_review]` command, with where each came from. */
  review: ReviewResolution;
  toolPlan: ToolPlan;
  userShell: string;
  /** `$UX_HOME/rules`: rule files found there are loaded, approved prefixes are saved there. */
  rulesDirectory: string;
  /** `$UX_HOME/cache`: what sandbox probes learned, so later starts skip them. */
  cacheDirectory: string;
  /** `$UX_HOME/quarantine`: where protected paths a sandboxed command created are moved. */
  quarantineDirectory: string;
  /** The sandbox plugins loaded (shipped, then `sandbox_plugins`), with their checked `[sandbox.<id>]` settings. */
  sandboxPlugins: LoadedSandboxPlugins;
  /** What every backend is created with (cache, quarantine). */
  sandboxHost: SandboxHostContext;
  warnings: string[];
}

/** Reads config and requirements and resolves features and session settings (throws `ConfigError`). */
export function loadCliSession(io: Io, flags: SessionFlags = {}): CliSession {
  const configuration = loadConfiguration(io.env, flags.configOverrides);
  const features = resolveFeatures({
    platform: io.platform,
    user: configuration.user,
    requirements: configuration.requirements,
    profile: flags.profile,
    cli: { enable: flags.enable ?? [], disable: flags.disable ?? [] },
  });
  const settings = resolveSessionSettings({
    user: configuration.user,
    requirements: configuration.requirements,
    profile: features.profile?.name,
    cli: {
      approvalPolicy:
        flags.approvalPolicy === undefined
          ? undefined
          : { value: flags.approvalPolicy, flag: `--approval ${flags.approvalPolicy as string}` },
      sandboxMode:
        flags.sandboxMode === undefined
          ? undefined
          : { value: flags.sandboxMode, flag: `${flags.sandboxOption ?? '--sandbox'} ${flags.sandboxMode}` },
      writableRoots: flags.writableRoots,
      network:
        flags.network === undefined
          ? undefined
          : { value: flags.network, flag: flags.network ? '--network' : '--no-network' },
      allowDomains: flags.allowDomains?.map((value) => ({ value, flag: `--allow-domain ${value}` })),
      allowUnixSockets: flags.allowUnixSockets?.map((value) => ({
        value,
        flag: `--allow-unix-socket ${value}`,
      })),
      denyRead: flags.denyRead?.map((value) => ({ value, flag: `--deny-read ${value}` })),
      environment:
        flags.environment === undefined
          ? undefined
          : { value: flags.environment, flag: `--env ${flags.environment}` },
    },
    homeDir: io.env.HOME || homedir(),
  });
  const review = resolveReviewSettings({
    user: configuration.user,
    requirements: configuration.requirements,
  });
  // An --env that names nothing (or something forbidden) is refused before anything starts.
  if (flags.environment !== undefined) chooseEnvironment(settings, flags.environment);
  const userShell = io.env.SHELL || safeUserShell() || '/bin/bash';
  const home = configPaths(io.env).home;
  const toolPlan = planTools({
    flags: features.flags,
    platform: io.platform,
    userShell,
    zshFork: features.flags.shell_zsh_fork
      ? zshForkPaths(home, configuration.user?.zshFork)
      : configuration.user?.zshFork,
    allowLoginShell: configuration.user?.allowLoginShell,
    environments: toolPlanEnvironments(settings.environments),
  });
  const sandboxPlugins = loadSandboxPlugins({
    user: configuration.user,
    requirements: configuration.requirements,
    shipped: SHIPPED_SANDBOX_PLUGINS,
    platform: io.platform,
    homeDir: io.env.HOME || homedir(),
    cwd: process.cwd(),
  });
  return {
    configuration,
    flags,
    features,
    settings,
    review,
    toolPlan,
    userShell,
    rulesDirectory: join(home, 'rules'),
    cacheDirectory: join(home, 'cache'),
    quarantineDirectory: join(home, 'quarantine'),
    sandboxPlugins,
    sandboxHost: { cacheDir: join(home, 'cache'), quarantineDir: join(home, 'quarantine') },
    warnings: [
      ...(configuration.user?.warnings ?? []),
      ...(configuration.requirements?.warnings ?? []),
      ...features.warnings,
      ...toolPlan.warnings,
      ...sandboxPlugins.warnings,
    ],
  };
}

/** The classic sandbox policy for a mode and the `[sandbox_workspace_write]` settings. */
export function sandboxPolicyFor(mode: SandboxMode, settings: SessionResolution): SandboxPolicy {
  switch (mode) {
    case 'read-only':
      return { type: 'read-only', network_access: false };
    case 'workspace-write':
      return {
        type: 'workspace-write',
        writable_roots: settings.workspaceWrite.writableRoots,
        network_access: settings.workspaceWrite.networkAccess,
        exclude_tmpdir_env_var: settings.workspaceWrite.excludeTmpdirEnvVar,
        exclude_slash_tmp: settings.workspaceWrite.excludeSlashTmp,
      };
    case 'danger-full-access':
      return { type: 'danger-full-access' };
    case 'external-sandbox':
      return { type: 'external-sandbox', network_access: 'restricted' };
  }
}

/**
 * What sandboxed commands of this session may do: the mode's policy (with `[sandbox_workspace_write]`
 * and `--writable-root`), every deny-read entry, the resolved network (`off` → `restricted`, `on` →
 * `enabled`, by domain → `proxied`, whose `networkProxy` the session adds when it starts its proxy:
 * `withNetworkProxy`) and the unix sockets allowed. Deny-read entries are made absolute here, once:
 * `~` and `~/…` are the home directory, anything relative is relative to the session directory `cwd`
 * (a glob too), so a command run elsewhere (`workdir`) is denied the same files. A deny-read entry or
 * `--no-network` with a mode that runs without a sandbox is refused: neither could be enforced. So is a
 * network by domain or a unix socket list when commands run in a remote environment by default: an
 * exec-server can be given neither.
 */
export function effectivePolicyFor(
  session: CliSession,
  place: { cwd: string; homeDir?: string },
): EffectivePolicy {
  const { settings } = session;
  const mode = settings.sandboxMode;
  const policy = effectivePolicyFromSandboxPolicy(sandboxPolicyFor(mode.value, settings));
  if (policy.fileSystem.kind !== 'restricted') {
    const unsandboxed = `sandbox mode ${mode.value} (from ${mode.source}) runs commands without a ux sandbox`;
    const [entry] = settings.denyRead;
    if (entry?.location)
      throw new ConfigError({
        ...entry.location,
        reason: `deny_read needs a sandbox to hide "${entry.pattern}", but ${unsandboxed}; choose read-only or workspace-write, or clear the list for this run with -c deny_read=[]`,
      });
    if (entry) throw new UxError('invalid_arguments', `${entry.source} needs a sandbox, but ${unsandboxed}`);
    const { flags } = session;
    const flagged = [
      ...(flags.network === false ? ['--no-network'] : []),
      ...(flags.allowDomains ?? []).map((host) => `--allow-domain ${host}`),
      ...(flags.allowUnixSockets ?? []).map((path) => `--allow-unix-socket ${path}`),
    ];
    if (flagged.length > 0)
      throw new UxError('invalid_arguments', `${flagged[0]} needs a sandbox, but ${unsandboxed}`);
    return policy;
  }
  refuseRemoteNetwork(settings);
  const homeDir = place.homeDir ?? homedir();
  const sockets = settings.allowUnixSockets.map((entry) => entry.path);
  return {
    fileSystem: {
      ...policy.fileSystem,
      entries: [
        ...policy.fileSystem.entries,
        ...settings.denyRead.map((entry) => denyReadEntry(entry, place.cwd, homeDir)),
      ],
    },
    network: NETWORK_POLICY[settings.network.mode],
    ...(sockets.length > 0 ? { allowUnixSockets: sockets } : {}),
  };
}

const NETWORK_POLICY = { off: 'restricted', on: 'enabled', domains: 'proxied' } as const;

/** The session's policy with the endpoint of its proxy (`startCliNetworkProxy`). */
export function withNetworkProxy(policy: EffectivePolicy, endpoint: NetworkProxyEndpoint): EffectivePolicy {
  return { ...policy, networkProxy: endpoint };
}

/**
 * A network by domain and a unix socket list cannot reach a remote environment (the proxy is this
 * machine's; the exec-server wire has neither): refused before anything starts when the session's
 * default environment is remote. Calls a model sends elsewhere are refused by the exec-server codec.
 */
function refuseRemoteNetwork(settings: SessionResolution): void {
  const id = settings.defaultEnvironment;
  const remote = settings.environments.find(
    (environment) => environment.id === id && environment.kind !== 'local',
  );
  if (!remote) return;
  const where = `commands run in the remote environment "${id}" (default_environment or --env), and an exec-server`;
  const { network } = settings;
  if (network.mode === 'domains') {
    const reason = `network by domain (from ${network.source}) cannot be used there: ${where} cannot reach this machine's allow-list proxy; give that environment the network on or off (--network / --no-network)`;
    if (!network.location) throw new UxError('invalid_arguments', reason);
    throw new ConfigError({ ...network.location, reason });
  }
  const [socket] = settings.allowUnixSockets;
  if (socket) {
    const reason = `allow_unix_sockets entry "${socket.path}" (from ${socket.source}) cannot be used there: ${where} cannot be told which unix sockets to allow`;
    if (!socket.location) throw new UxError('invalid_arguments', reason);
    throw new ConfigError({ ...socket.location, reason });
  }
}

function denyReadEntry(entry: DenyReadEntry, cwd: string, homeDir: string): FileSystemEntry {
  const { pattern } = entry;
  const expanded =
    pattern === '~' ? homeDir : pattern.startsWith('~/') ? join(homeDir, pattern.slice(2)) : pattern;
  const absolute = isAbsolute(expanded) ? resolve(expanded) : resolve(cwd, expanded);
  return GLOB_CHARACTERS.test(pattern)
    ? { path: { type: 'glob', pattern: absolute }, access: 'none' }
    : { path: { type: 'path', path: absolute }, access: 'none' };
}

/** The account's login shell, when the system knows it. */
export function safeUserShell(): string | undefined {
  try {
    return userInfo().shell ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * The patched zsh and the execve wrapper: the configured paths, else what `ux zsh-fork build` installed
 * in `$UX_HOME/zsh-fork` and the wrapper built with ux. A default that is not there is left out, so the
 * plan says how to get it instead of failing at the first command.
 */
export function zshForkPaths(
  home: string,
  configured: { zshPath?: string; execveWrapperPath?: string } | undefined,
): { zshPath?: string; execveWrapperPath?: string } {
  const zsh = locateZshFork({
    uxHome: home,
    ...(configured?.zshPath ? { configured: configured.zshPath } : {}),
  });
  // The real path: it is bound into sandboxes as it is named, and a symlinked one would not resolve there.
  const wrapper = configured?.execveWrapperPath ?? realpathOr(defaultWrapperPath());
  return {
    ...(zsh.origin === 'configured' || zsh.exists ? { zshPath: zsh.path } : {}),
    ...(configured?.execveWrapperPath || existsSync(wrapper) ? { execveWrapperPath: wrapper } : {}),
  };
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
