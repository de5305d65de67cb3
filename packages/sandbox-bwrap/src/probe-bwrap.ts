import { execFile } from 'node:child_process';
import type { SandboxProbe } from '@ux/protocol/core';
import { launcherArgv } from './bwrap-plan.js';

export interface BwrapFeatures {
  version: string;
  disableUserns: boolean;
  /** `--argv0` (bubblewrap 0.9+): a command can be told the name it was called by. */
  argv0: boolean;
}

interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  /** A signal from outside (not our deadline) ended it. */
  interrupted?: boolean;
}

/**
 * Runs a command with a deadline and returns what it printed. It runs in its own session, so a
 * person's Ctrl-C at the terminal does not reach it; but a Ctrl-C that lands between the fork and
 * the child's setsid is still delivered to the child once it unblocks its signals. A probe ended by a
 * signal it did not ask for says nothing about bubblewrap, so it runs again (twice at most).
 */
async function run(file: string, args: string[], timeoutMs = 10_000): Promise<RunResult> {
  let result = await runOnce(file, args, timeoutMs);
  for (let attempt = 0; result.interrupted && attempt < 2; attempt++)
    result = await runOnce(file, args, timeoutMs);
  return result;
}

function runOnce(file: string, args: string[], timeoutMs: number): Promise<RunResult> {
  return new Promise((resolve) => {
    const options = { timeout: timeoutMs, env: { PATH: '/usr/bin:/bin' }, detached: true };
    execFile(file, args, options, (error, stdout, stderr) => {
      if (!error) return resolve({ code: 0, stdout: String(stdout), stderr: String(stderr) });
      const { code, signal, killed } = error as { code?: unknown; signal?: unknown; killed?: boolean };
      // A failure without output (not started, killed, timed out) still says what happened.
      const why =
        typeof signal === 'string'
          ? killed
            ? `no answer within ${timeoutMs} ms`
            : `killed by ${signal}`
          : typeof code === 'number'
            ? ''
            : error.message;
      resolve({
        code: typeof code === 'number' ? code : 1,
        stdout: String(stdout),
        stderr: String(stderr) || why,
        interrupted: typeof signal === 'string' && !killed,
      });
    });
  });
}

export async function bwrapFeatures(bwrapPath: string): Promise<BwrapFeatures | { reason: string }> {
  const [version, help] = await Promise.all([run(bwrapPath, ['--version']), run(bwrapPath, ['--help'])]);
  if (version.code !== 0)
    return { reason: `${bwrapPath} --version failed: ${(version.stderr || version.stdout).trim()}` };
  return {
    version: version.stdout.trim().replace(/^bubblewrap\s+/, ''),
    disableUserns: help.stdout.includes('--disable-userns'),
    argv0: help.stdout.includes('--argv0'),
  };
}

/**
 * Starts a real sandbox the way plans do (the launcher with the seccomp program in a sealed memfd, user,
 * pid and net namespaces, private /proc and /dev, no capabilities, the filter) and turns a failure into
 * the reason and the fix.
 */
export async function probeBwrapRun(
  bwrapPath: string,
  program: Uint8Array,
  execShim: string,
): Promise<SandboxProbe | undefined> {
  const [launcher, ...launcherArgs] = launcherArgv(execShim, program);
  const result = await run(launcher!, [
    ...launcherArgs,
    bwrapPath,
    '--die-with-parent',
    '--unshare-user',
    '--unshare-pid',
    '--unshare-net',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--cap-drop',
    'ALL',
    '--seccomp',
    '3',
    '--',
    execShim,
    '/bin/true',
  ]);
  if (result.code === 0) return undefined;
  return explainFailure((result.stderr || result.stdout).trim());
}

/** The reason and the fix for a bwrap start-up failure (docs/reference/sandbox.md §6). */
export function explainFailure(stderr: string): SandboxProbe & { available: false } {
  const text = stderr || 'bwrap exited without a message';
  if (/setting up uid map: Permission denied|RTM_NEWADDR|RTM_NEWLINK/.test(text)) {
    return {
      available: false,
      reason: `bubblewrap cannot set up a user namespace (${text}); AppArmor restricts unprivileged user namespaces on this system`,
      fix: 'allow them: sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, or install an AppArmor profile for bwrap with the "userns," rule',
    };
  }
  if (
    /No permissions to create (a )?new namespace|Creating new namespace failed|unshare.*(Operation not permitted|No space left)/i.test(
      text,
    )
  ) {
    return {
      available: false,
      reason: `user namespaces are not available (${text})`,
      fix: 'enable them: sudo sysctl -w user.max_user_namespaces=15000 (and kernel.unprivileged_userns_clone=1 where it exists); in a container, allow namespaces (e.g. docker run --security-opt seccomp=unconfined --security-opt apparmor=unconfined)',
    };
  }
  if (/Can't mount proc/.test(text)) {
    return {
      available: false,
      reason: `bubblewrap cannot mount a private /proc here (${text}); ux does not fall back to the host's /proc, which would expose other processes`,
      fix: 'run where /proc can be mounted (a container needs --privileged or an unmasked /proc), or use the container itself as the sandbox with sandbox mode "danger-full-access"',
    };
  }
  if (/memfd|memory file|F_ADD_SEALS|F_GET_SEALS/.test(text)) {
    return {
      available: false,
      reason: `the seccomp program cannot be handed to bubblewrap in a sealed memory file (${text})`,
      fix: 'use a kernel with memfd sealing (Linux 3.17 or later); ux never passes the filter through a file a sandboxed command could rewrite',
    };
  }
  if (/seccomp/i.test(text)) {
    return {
      available: false,
      reason: `bubblewrap could not load the seccomp filter (${text})`,
      fix: 'use a kernel with seccomp filter support (CONFIG_SECCOMP_FILTER)',
    };
  }
  return {
    available: false,
    reason: `bubblewrap failed to start a sandbox: ${text}`,
    fix: 'run `ux doctor` and check that bwrap works: bwrap --ro-bind / / --unshare-user true',
  };
}
