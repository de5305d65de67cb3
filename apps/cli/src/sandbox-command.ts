import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { resolve } from 'node:path';
import { createSandboxSelector } from '@ux/orchestrator/sandbox-selector';
import {
  type EffectivePolicy,
  effectivePolicyFromSandboxPolicy,
  type FileSystemEntry,
  type LaunchPlan,
  type SandboxNotice,
  TERMINATE_GRACE_MS,
} from '@ux/protocol/core';
import { loadCliSession, sandboxPolicyFor } from './cli-session.js';
import type { Io } from './io.js';
import { oneOf, parseOptions } from './parse-options.js';
import { createCliSandboxRegistry } from './sandbox-backends.js';
import { UsageError } from './usage-error.js';

export const SANDBOX_HELP = `Usage: ux sandbox [options] -- CMD…

Runs CMD directly under this platform's sandbox, with the terminal and environment as they are, and
exits with its exit code (128 + N when signal N ended it). Use it to try a policy. The policy starts
from the config ([sandbox_workspace_write], sandbox_backends) and the options add to it.

Options:
  --mode MODE            read-only or workspace-write (default workspace-write)
  --cwd DIR              working directory, writable in workspace-write mode (default the current one)
  --writable-root DIR    another writable directory (repeatable)
  --deny-read PATH       a path or glob the command may not read (repeatable)
  --network              allow network access (default off)
  -h, --help             this help

Exit codes: the command's own; 1 when the sandbox cannot run here (with the fix); 2 usage error.
`;

const HELP_COMMAND = 'ux sandbox --help';
const SIGNALS = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGTERM: 15 } as const;

export async function sandboxCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseOptions(
    args,
    {
      mode: { type: 'string' },
      cwd: { type: 'string' },
      'writable-root': { type: 'string', multiple: true },
      'deny-read': { type: 'string', multiple: true },
      network: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    HELP_COMMAND,
  );
  if (values.help) {
    io.stdout(SANDBOX_HELP);
    return 0;
  }
  if (positionals.length === 0) throw new UsageError('no command given; put it after --', HELP_COMMAND);
  const mode = oneOf(
    values.mode ?? 'workspace-write',
    ['read-only', 'workspace-write'] as const,
    '--mode',
    HELP_COMMAND,
  );
  const cwd = resolve(values.cwd ?? process.cwd());
  if (!existsSync(cwd) || !statSync(cwd).isDirectory())
    throw new UsageError(`--cwd ${cwd}: no such directory`, HELP_COMMAND);
  const writableRoots = (values['writable-root'] ?? []).map((root) => {
    const path = resolve(cwd, root);
    if (!existsSync(path)) throw new UsageError(`--writable-root ${root}: no such directory`, HELP_COMMAND);
    return path;
  });
  if (mode === 'read-only' && writableRoots.length > 0)
    throw new UsageError('--writable-root needs --mode workspace-write', HELP_COMMAND);

  const session = loadCliSession(io, { sandboxMode: mode, sandboxOption: '--mode' });
  for (const warning of session.warnings) io.stderr(`ux: warning: ${warning}\n`);
  const policy = effectivePolicyFromSandboxPolicy(sandboxPolicyFor(mode, session.settings));
  const fileSystem = policy.fileSystem;
  if (fileSystem.kind !== 'restricted') throw new Error(`unexpected file-system policy ${fileSystem.kind}`);
  const entries: FileSystemEntry[] = [
    ...fileSystem.entries,
    ...writableRoots.map((path): FileSystemEntry => ({ path: { type: 'path', path }, access: 'write' })),
    ...(values['deny-read'] ?? []).map(
      (path): FileSystemEntry =>
        /[*?[]/.test(path)
          ? { path: { type: 'glob', pattern: path }, access: 'none' }
          : { path: { type: 'path', path: resolve(cwd, path) }, access: 'none' },
    ),
  ];
  const effective: EffectivePolicy = {
    fileSystem: { kind: 'restricted', entries },
    network: values.network ? 'enabled' : policy.network,
  };

  const selector = createSandboxSelector({
    sandboxRegistry: createCliSandboxRegistry(session.settings.enabledBackends?.value, {
      cacheDir: session.cacheDirectory,
      quarantineDir: session.quarantineDirectory,
    }),
    platform: io.platform,
    enabledBackends: session.settings.enabledBackends?.value,
    allowedBackends: session.settings.allowedBackends,
  });
  const backend = await selector.select();
  const tty = Boolean(process.stdin.isTTY);
  const plan = await backend.plan({
    argv: positionals,
    cwd,
    env: Object.fromEntries(
      Object.entries(io.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
    ),
    policy: effective,
    tty,
  });
  // What the sandbox takes back (a protected path the command created) is said on stderr at once.
  const say = (notice: SandboxNotice) => io.stderr(`${tty ? '\r\n' : ''}ux sandbox: ${notice.message}\n`);
  plan.onNotice?.(say);
  try {
    return await run(plan, tty);
  } finally {
    // The backend's helpers end with this process (the path guard at the end of its input).
    await plan.cleanup?.();
  }
}

/**
 * Runs the plan with the terminal inherited and resolves with the exit code. With a terminal the
 * command stays in this job's process group, so Ctrl-C and Ctrl-\\ reach it from the terminal itself
 * (and the sandbox wrapper passes them by). Without one it leads a process group of its own, and ux
 * passes SIGINT and SIGQUIT on to that group. SIGTERM and SIGHUP sent to ux end the command as the
 * door's terminate does: the signal first, then SIGKILL of what is left after a short grace.
 */
function run(plan: LaunchPlan, tty: boolean): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(plan.argv[0]!, plan.argv.slice(1), {
      cwd: plan.cwd,
      env: plan.env,
      stdio: 'inherit',
      detached: !tty,
    });
    const send = (signal: NodeJS.Signals) => {
      try {
        if (tty) child.kill(signal);
        else if (child.pid !== undefined) process.kill(-child.pid, signal);
      } catch {
        // Already gone.
      }
    };
    let kill: NodeJS.Timeout | undefined;
    const handlers = (Object.keys(SIGNALS) as (keyof typeof SIGNALS)[]).map((signal) => {
      const handler = () => {
        const fromTerminal = signal === 'SIGINT' || signal === 'SIGQUIT';
        if (fromTerminal && tty) return;
        send(signal);
        if (!fromTerminal) kill ??= setTimeout(() => send('SIGKILL'), TERMINATE_GRACE_MS);
      };
      process.on(signal, handler);
      return [signal, handler] as const;
    });
    const done = () => {
      for (const [signal, handler] of handlers) process.off(signal, handler);
      clearTimeout(kill);
    };
    child.once('error', (error) => {
      done();
      reject(error);
    });
    child.once('exit', (code, signal) => {
      done();
      resolvePromise(code ?? 128 + (signal ? signalNumber(signal) : 0));
    });
  });
}

function signalNumber(signal: NodeJS.Signals): number {
  return constants.signals[signal] ?? 0;
}
