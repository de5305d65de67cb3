import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { denyReadProblem, domainPatternProblem } from '@ux/config';
import { type EffectivePolicy, type SandboxMode, UxError } from '@ux/protocol/core';
import { type CliSession, effectivePolicyFor, loadCliSession, type SessionFlags } from './cli-session.js';
import type { Io } from './io.js';
import { asUsageError, parseConfigArguments } from './parse-config-arguments.js';
import { oneOf } from './parse-options.js';
import { protectSession } from './session-protection.js';
import { UsageError } from './usage-error.js';

/**
 * The options that choose what a command may do, the same on `ux exec`, `ux mcp` and `ux sandbox`.
 * Spread into a command's `parseOptions` table.
 */
export const POLICY_OPTIONS = {
  sandbox: { type: 'string' },
  profile: { type: 'string' },
  'writable-root': { type: 'string', multiple: true },
  'deny-read': { type: 'string', multiple: true },
  network: { type: 'boolean' },
  'no-network': { type: 'boolean' },
  'allow-domain': { type: 'string', multiple: true },
  'allow-unix-socket': { type: 'string', multiple: true },
  config: { type: 'string', short: 'c', multiple: true },
} as const;

/** The Options lines for `POLICY_OPTIONS`, for the modes a command accepts. */
export function policyHelp(modes: readonly SandboxMode[], defaultMode = 'default from config'): string {
  const choices = `${modes.slice(0, -1).join(', ')} or ${modes[modes.length - 1]}`;
  return `  --sandbox MODE         ${choices} (${defaultMode})
  --profile NAME         use [profiles.NAME] from the config
  --writable-root DIR    another writable directory in workspace-write mode (repeatable)
  --deny-read PATH       a path or glob the command may not read (repeatable; relative to --cwd)
  --network              the host's network inside the sandbox (network = "on")
  --no-network           no network inside the sandbox, whatever the config says
  --allow-domain HOST    the network by domain: only through ux's allow-list proxy, to the config's
                         network.allow list plus HOST (repeatable; github.com, *.example.org, an IP,
                         with :PORT); other hosts are asked about, or denied when nobody can be asked
  --allow-unix-socket PATH
                         a unix socket outside the sandbox commands may connect to (repeatable; e.g.
                         $SSH_AUTH_SOCK); every other one stays out of reach
  -c, --config KEY=VALUE set a config.toml key for this run (repeatable; the value is TOML, else
                         a string): -c sandbox_workspace_write.network=on
`;
}

/** What `parseOptions` returns for `POLICY_OPTIONS`. */
export interface PolicyValues {
  sandbox?: string;
  profile?: string;
  'writable-root'?: string[];
  'deny-read'?: string[];
  network?: boolean;
  'no-network'?: boolean;
  'allow-domain'?: string[];
  'allow-unix-socket'?: string[];
  config?: string[];
}

export interface PolicyContext {
  /** The session directory (absolute): relative paths are relative to it. */
  cwd: string;
  env: NodeJS.ProcessEnv;
  helpCommand: string;
  /** The modes `--sandbox` accepts here. */
  modes: readonly SandboxMode[];
  /** The option that named the mode, when not `--sandbox` (the deprecated `--mode`). */
  sandboxOption?: string;
}

/** The session flags the policy options choose; a mistake in one is a usage error naming it. */
export function policyFlags(values: PolicyValues, context: PolicyContext): SessionFlags {
  const { helpCommand } = context;
  const sandboxOption = context.sandboxOption ?? '--sandbox';
  if (values.network && values['no-network'])
    throw new UsageError('--network and --no-network contradict each other; give one', helpCommand);
  const allowDomains = (values['allow-domain'] ?? []).map((host) => {
    const problem = domainPatternProblem(host, 'allow');
    if (problem) throw new UsageError(`--allow-domain ${problem}`, helpCommand);
    return host;
  });
  if (allowDomains.length > 0 && (values.network || values['no-network']))
    throw new UsageError(
      values['no-network']
        ? `--allow-domain ${allowDomains[0]} limits the network to listed hosts and --no-network takes it away; give one`
        : `--allow-domain ${allowDomains[0]} limits the network to listed hosts and --network gives all of it; give one`,
      helpCommand,
    );
  const homeDir = homeOf(context.env);
  const allowUnixSockets = (values['allow-unix-socket'] ?? []).map((path) => {
    const problem =
      path === ''
        ? 'needs a path'
        : path.includes('\0')
          ? 'a path cannot contain a NUL character'
          : undefined;
    if (problem) throw new UsageError(`--allow-unix-socket ${problem}`, helpCommand);
    return resolve(context.cwd, expandHome(path, homeDir));
  });
  const writableRoots = (values['writable-root'] ?? []).map((root) => {
    const path = resolve(context.cwd, expandHome(root, homeDir));
    if (!existsSync(path) || !statSync(path).isDirectory())
      throw new UsageError(`--writable-root ${root}: no such directory`, helpCommand);
    return path;
  });
  const denyRead = (values['deny-read'] ?? []).map((entry) => {
    const problem = entry === '' ? 'needs a path or glob' : denyReadProblem(entry);
    if (problem) throw new UsageError(`--deny-read ${problem}`, helpCommand);
    return entry;
  });
  const configOverrides = parseConfigArguments(values.config, helpCommand);
  return {
    ...(values.sandbox === undefined
      ? {}
      : { sandboxMode: oneOf(values.sandbox, context.modes, sandboxOption, helpCommand), sandboxOption }),
    ...(values.profile === undefined ? {} : { profile: values.profile }),
    writableRoots,
    denyRead,
    ...(values.network ? { network: true } : values['no-network'] ? { network: false } : {}),
    ...(allowDomains.length > 0 ? { allowDomains } : {}),
    ...(allowUnixSockets.length > 0 ? { allowUnixSockets } : {}),
    configOverrides,
  };
}

/** `loadCliSession`, with a mistake in a `-c` value turned into a usage error naming the argument. */
export function loadPolicySession(io: Io, flags: SessionFlags, helpCommand: string): CliSession {
  try {
    return loadCliSession(io, flags);
  } catch (error) {
    throw asUsageError(error, helpCommand);
  }
}

/**
 * The session's effective policy (`effectivePolicyFor`, protected by `protectSession`), checked against the flags first:
 * `--writable-root` needs workspace-write. Contradictions between flags and the resolved mode are usage
 * errors; between the config files and the mode, `ConfigError`s.
 */
export function sessionPolicy(
  session: CliSession,
  flags: SessionFlags,
  context: { cwd: string; env: NodeJS.ProcessEnv; helpCommand: string },
): EffectivePolicy {
  const mode = session.settings.sandboxMode;
  if ((flags.writableRoots?.length ?? 0) > 0 && mode.value === 'read-only')
    throw new UsageError(
      `--writable-root needs ${flags.sandboxOption ?? '--sandbox'} workspace-write (the sandbox mode is read-only, from ${mode.source})`,
      context.helpCommand,
    );
  try {
    const homeDir = homeOf(context.env);
    const policy = effectivePolicyFor(session, { cwd: context.cwd, homeDir });
    // A sandboxed session also keeps ux's own state, the host's /tmp and the repositories found now out
    // of the sandbox's reach (docs/threat-model.md).
    if (policy.fileSystem.kind !== 'restricted') return policy;
    return protectSession(policy, session, { cwd: context.cwd, homeDir, env: context.env }).policy;
  } catch (error) {
    if (UxError.isInstance(error) && error.code === 'invalid_arguments')
      throw new UsageError(error.message, context.helpCommand);
    throw error;
  }
}

/** `--cwd` made absolute, or the current directory; a usage error when it is not a directory. */
export function sessionDirectory(value: string | undefined, helpCommand: string): string {
  const cwd = resolve(value ?? process.cwd());
  if (!existsSync(cwd) || !statSync(cwd).isDirectory())
    throw new UsageError(`--cwd ${cwd}: no such directory`, helpCommand);
  return cwd;
}

function homeOf(env: NodeJS.ProcessEnv): string {
  return env.HOME || homedir();
}

function expandHome(path: string, homeDir: string): string {
  if (path === '~') return homeDir;
  return path.startsWith('~/') ? join(homeDir, path.slice(2)) : path;
}
