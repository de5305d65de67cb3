import { existsSync, realpathSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { join } from 'node:path';
import {
  type ConfigOverride,
  chooseEnvironment,
  type ResolvedFeatures,
  type ReviewResolution,
  resolveFeatures,
  resolveReviewSettings,
  resolveSessionSettings,
  type SessionResolution,
  sessionEffectivePolicy,
  toolPlanEnvironments,
} from '@ux/config';
import { planTools, type ToolPlan } from '@ux/features';
import type {
  ApprovalPolicy,
  EffectivePolicy,
  NetworkProxyEndpoint,
  SandboxHostContext,
  SandboxMode,
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
  /** `--env NAME`: the execution environment commands run in when a call does not say. */
  environmentId?: string;
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
        flags.environmentId === undefined
          ? undefined
          : { value: flags.environmentId, flag: `--env ${flags.environmentId}` },
    },
    homeDir: io.env.HOME || homedir(),
  });
  const review = resolveReviewSettings({
    user: configuration.user,
    requirements: configuration.requirements,
  });
  // An --env that names nothing (or something forbidden) is refused before anything starts.
  if (flags.environmentId !== undefined) chooseEnvironment(settings, flags.environmentId);
  const userShell = io.env.SHELL || safeUserShell() || '/bin/bash';
  const home = configPaths(io.env).home;
  const toolPlan = planTools({
    flags: features.flags,
    features: features.features,
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

/**
 * What sandboxed commands of this session may do: `sessionEffectivePolicy` of `@ux/config` (the
 * rules an embedder gets too: deny-read and network flags need a sandbox, no network by domain or unix
 * socket list in a remote default environment, deny-read entries made absolute), given the command
 * line's network and socket choices so a mode without a sandbox refuses them by name.
 */
export function effectivePolicyFor(
  session: CliSession,
  place: { cwd: string; homeDir?: string },
): EffectivePolicy {
  const { flags } = session;
  const flagged = [
    ...(flags.network === false ? ['--no-network'] : []),
    ...(flags.allowDomains ?? []).map((host) => `--allow-domain ${host}`),
    ...(flags.allowUnixSockets ?? []).map((path) => `--allow-unix-socket ${path}`),
  ];
  return sessionEffectivePolicy(session.settings, { ...place, flagged });
}

/** The session's policy with the endpoint of its proxy (`startCliNetworkProxy`). */
export function withNetworkProxy(policy: EffectivePolicy, endpoint: NetworkProxyEndpoint): EffectivePolicy {
  return { ...policy, networkProxy: endpoint };
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
