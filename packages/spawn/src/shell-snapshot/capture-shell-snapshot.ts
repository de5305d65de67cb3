import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { ExecProcess, ExitStatus, SpawnRequest } from '@ux/protocol/core';
import { resolveProgram } from '../resolve-program.js';
import { captureScript } from './capture-script.js';
import { stampLoginFiles } from './is-shell-snapshot-fresh.js';
import { parseCaptureOutput } from './parse-capture-output.js';
import { quotePosix } from './quote-posix.js';
import { renderSnapshotFile } from './render-snapshot-file.js';
import { type CaptureWrap, runCaptureProcess } from './run-capture-process.js';
import { snapshotLoginFiles } from './snapshot-login-files.js';
import type { SnapshotShellKind } from './snapshot-shell-kind.js';
import { snapshotSourcedFiles } from './snapshot-sourced-files.js';

export interface ShellSnapshot {
  /** The snapshot file (absolute), to be sourced with `snapshotCommandScript`. */
  file: string;
  shell: string;
  kind: SnapshotShellKind;
  capturedAt: number;
  /**
   * Login files and their mtimes (null = absent) when captured; the shell's own binary is listed last,
   * so an upgraded shell (whose options may differ) also makes the snapshot stale.
   */
  loginFiles: { path: string; mtimeMs: number | null }[];
  /** What the login files printed while captured (stdout before the snapshot, and stderr), trimmed; '' when quiet. */
  diagnostics: string;
  /**
   * The variables the file sets or unsets (what the login files changed), sorted. The file is right
   * for commands that start with the values the capture started with; when one of these starts
   * differently (a new `PATH`), capture again.
   */
  changedVariables: string[];
}

export interface CaptureShellSnapshotOptions {
  shell: string;
  kind: SnapshotShellKind;
  /** The environment commands start from. */
  env: Record<string, string>;
  cwd: string;
  /** Where to write it: created with mode 0600 (its directory 0700), replaced atomically. */
  file: string;
  spawner: { spawn(request: SpawnRequest): Promise<ExecProcess> };
  /** Launches the capture inside the session's sandbox (read-only, no network); identity when absent. */
  wrap?: CaptureWrap;
  /**
   * Variables never captured (the door pins them: TERM, PAGER, NO_COLOR, LANG, LC_*, …) besides the
   * shell's own (PWD, OLDPWD, SHLVL, _, …).
   */
  exclude?: (name: string) => boolean;
  /**
   * Default 5000. A capture that takes longer is ended (its whole group) and fails. The check that the
   * written file loads gets a budget of the same length.
   */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export type ShellSnapshotCapture =
  | { ok: true; snapshot: ShellSnapshot }
  | { ok: false; reason: string; diagnostics: string };

export const DEFAULT_SNAPSHOT_TIMEOUT_MS = 5_000;
/** A capture printing more than this (stdout and stderr together) is ended: no sane login state is that big. */
const MAX_CAPTURE_BYTES = 64 * 1024 * 1024;
/** Diagnostics kept, from the start (what a login file printed first is what explains it). */
const MAX_DIAGNOSTICS_CHARS = 16 * 1024;

/**
 * Captures a login shell's state once, into a file each later command sources instead of reading the
 * login files: runs `[shell, '-lc', CAPTURE_SCRIPT]` (stdin closed, through `wrap` and `spawner`),
 * renders what it printed as shell code (`renderSnapshotFile`), writes it (0600, atomically), and checks
 * that it loads in a fresh `shell -c` without errors. What the login files printed goes to
 * `diagnostics`, never into the file.
 *
 * Fails (`ok: false`, with a reason in words) when the shell cannot start, a login file calls `exit` or
 * fails before the capture ran, a login file has a syntax error, the capture takes longer than
 * `timeoutMs` (its whole process group is ended), it is cancelled, or the written file does not load.
 */
export async function captureShellSnapshot(
  options: CaptureShellSnapshotOptions,
): Promise<ShellSnapshotCapture> {
  const { shell, kind, env, spawner, wrap, signal } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_SNAPSHOT_TIMEOUT_MS;
  const invalid = invalidOption(options, timeoutMs);
  if (invalid) return { ok: false, reason: invalid, diagnostics: '' };
  const file = resolve(options.file);
  const marker = `__ux_snapshot_${randomBytes(12).toString('hex')}`;

  const watched = snapshotWatchedFiles(shell, kind, env, options.cwd);
  // Stamped before the capture: an edit while it runs makes the next freshness check fail.
  const loginFiles = stampLoginFiles(watched);
  const capturedAt = Date.now();
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  const checkMarker = `__ux_snapshot_check_${randomBytes(12).toString('hex')}`;
  // The load check runs in the capture's own process (and sandbox) once the host has written the
  // file: the shell waits for `launcher`, which execs a fresh `shell -c` with the environment the
  // capture started with. Without an `env` program to clear the environment, it runs apart.
  const envProgram = programPath('env', env, options.cwd);
  const launcher = envProgram ? `${temporary}.check` : undefined;
  let rendered: { text: string; changedVariables: string[] } | undefined;
  let problem: string | undefined;
  const render = (stdout: Buffer, startEnv: Record<string, string>) => {
    const output = parseCaptureOutput(stdout.toString('latin1'), marker);
    if (!output.begun || !output.ended) return undefined;
    // What the shell was given (a sandbox wrapper may add variables): only what the login changed is kept.
    return renderSnapshotFile({ kind, shell, capturedAt, output, startEnv, exclude: options.exclude });
  };
  const written = (text: string): boolean => {
    try {
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      writeFileSync(temporary, text, { encoding: 'latin1', mode: 0o600, flag: 'wx' });
      return true;
    } catch (error) {
      problem = `could not write the snapshot to ${file}: ${(error as Error).message}`;
      return false;
    }
  };

  // Made before the capture is planned: a sandbox makes visible only the host paths that exist
  // (`hostPaths`), so the load check inside would not find a directory made afterwards. A failure
  // here is reported by `written`, which tries again.
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  } catch {}
  try {
    const result = await runCaptureProcess({
      launch: {
        argv: [shell, '-lc', captureScript(kind, marker, launcher)],
        cwd: options.cwd,
        env: { ...env },
      },
      spawner,
      wrap,
      deadline: capturedAt + timeoutMs,
      signal,
      maxBytes: MAX_CAPTURE_BYTES,
      ...(launcher && envProgram
        ? {
            midway: {
              mark: Buffer.from(`\n${marker}:end\n`, 'latin1'),
              act: async (stdout: Buffer, startEnv: Record<string, string>) => {
                rendered = render(stdout, startEnv);
                if (!rendered || !written(rendered.text)) return 'stop' as const;
                const check = checkScript(checkMarker, temporary);
                const words = [envProgram, '-i', ...Object.entries(startEnv).map(([k, v]) => `${k}=${v}`)];
                const exec = `exec ${[...words, shell, '-c', check].map(quotePosix).join(' ')}\n`;
                try {
                  // Whole or not at all: the shell sources it as soon as the name exists.
                  writeFileSync(`${launcher}.tmp`, exec, { encoding: 'latin1', mode: 0o600 });
                  renameSync(`${launcher}.tmp`, launcher);
                } catch (error) {
                  problem = `could not write the snapshot's check to ${launcher}: ${(error as Error).message}`;
                  return 'stop' as const;
                }
                return { deadline: Date.now() + timeoutMs };
              },
            },
          }
        : {}),
    });
    if (result.outcome === 'spawn-failed')
      return { ok: false, reason: `could not start ${shell}: ${result.message}`, diagnostics: '' };

    // With the check folded in, what follows its first marker on stderr (and the capture's end on
    // stdout) is the check's; before it, the capture's.
    const allErr = result.stderr.toString('latin1');
    const checkAt = launcher ? allErr.indexOf(`${checkMarker}:load\n`) : -1;
    const captureErr = checkAt >= 0 ? allErr.slice(0, checkAt) : allErr;
    const stdout = result.stdout.toString('latin1');
    const output = parseCaptureOutput(stdout, marker);
    const diagnostics = joinDiagnostics(
      utf8(output.before),
      utf8(captureErr),
      output.ended && !launcher ? utf8(output.after) : '',
    );
    const failed = (reason: string): ShellSnapshotCapture => ({ ok: false, reason, diagnostics });
    if (problem) return failed(problem);

    const checking = launcher !== undefined && rendered !== undefined;
    switch (result.outcome) {
      case 'timeout':
        return failed(
          checking
            ? `the snapshot does not load in ${shell} -c within ${timeoutMs} ms`
            : `${shell} -l did not finish within ${timeoutMs} ms (a login file may loop or wait for something); it was ended with its process group`,
        );
      case 'aborted':
        return failed('the capture was cancelled');
      case 'too-large':
        return failed(
          `${shell} -l printed more than ${MAX_CAPTURE_BYTES} bytes while captured; it was ended`,
        );
    }
    const { status } = result;
    const how = status.signal ? `was killed by ${status.signal}` : `exited with code ${status.exitCode}`;
    // Before the exit checks: dash gives up on a syntax error (exit 2), bash and zsh skip the rest of the file.
    const syntax = syntaxErrorLine(utf8(captureErr));
    if (syntax) return failed(`a login file has a syntax error: ${syntax}`);
    if (!output.begun) {
      return failed(
        status.exitCode === 0 && !status.signal
          ? `${shell} -l ended without running the capture (a login file called exit or exec)`
          : `${shell} -l ${how} before the capture ran (a login file failed or called exit)`,
      );
    }
    if (!output.ended) return failed(`the capture script stopped before its end: ${shell} ${how}`);

    let load: { problem?: string; noise: string };
    let changedVariables: string[];
    if (checking && rendered) {
      changedVariables = rendered.changedVariables;
      load = judgeLoad(checkMarker, shell, {
        outcome: 'exited',
        status,
        stdout: output.after,
        stderr: checkAt >= 0 ? allErr.slice(checkAt) : '',
      });
    } else {
      const late = render(result.stdout, result.env);
      if (!late) return failed(`the capture script stopped before its end: ${shell} ${how}`);
      if (!written(late.text)) return failed(problem ?? `could not write the snapshot to ${file}`);
      changedVariables = late.changedVariables;
      load = await checkLoads({ ...options, timeoutMs }, temporary, checkMarker);
    }
    if (load.problem)
      return { ok: false, reason: load.problem, diagnostics: joinDiagnostics(diagnostics, load.noise) };
    try {
      renameSync(temporary, file);
    } catch (error) {
      return failed(`could not move the snapshot into place at ${file}: ${(error as Error).message}`);
    }
    return {
      ok: true,
      snapshot: {
        file,
        shell,
        kind,
        capturedAt,
        loginFiles,
        diagnostics: joinDiagnostics(diagnostics, load.noise),
        changedVariables,
      },
    };
  } finally {
    rmSync(temporary, { force: true });
    if (launcher) {
      rmSync(launcher, { force: true });
      rmSync(`${launcher}.tmp`, { force: true });
    }
  }
}

/** The check's `-c` script: markers around the sourcing on stderr, then one on stdout. */
function checkScript(marker: string, file: string): string {
  return [
    `\\command printf '%s\\n' '${marker}:load' >&2`,
    `. ${quotePosix(file)}`,
    `\\command printf '%s\\n' '${marker}:loaded' >&2`,
    `\\command printf '%s' '${marker}:ok'`,
  ].join('\n');
}

/** The absolute path of `name` on the commands' PATH, or undefined. */
function programPath(name: string, env: Record<string, string>, cwd: string): string | undefined {
  try {
    return resolveProgram([name], env, cwd);
  } catch {
    return undefined;
  }
}

/**
 * Sources the written file in a fresh `shell -c` (no login), under the same wrap: it must load with
 * no error and let the next command run. `noise` is what the shell printed outside the sourcing (its
 * `.zshenv`, say), which is no fault of the snapshot.
 */
async function checkLoads(
  options: CaptureShellSnapshotOptions & { timeoutMs: number },
  temporary: string,
  marker: string,
): Promise<{ problem?: string; noise: string }> {
  const result = await runCaptureProcess({
    launch: {
      argv: [options.shell, '-c', checkScript(marker, temporary)],
      cwd: options.cwd,
      env: { ...options.env },
    },
    spawner: options.spawner,
    wrap: options.wrap,
    deadline: Date.now() + options.timeoutMs,
    signal: options.signal,
    maxBytes: MAX_CAPTURE_BYTES,
  });
  if (result.outcome === 'spawn-failed')
    return { problem: `the snapshot does not load in ${options.shell} -c: ${result.message}`, noise: '' };
  return judgeLoad(
    marker,
    options.shell,
    {
      ...result,
      stdout: result.stdout.toString('latin1'),
      stderr: result.stderr.toString('latin1'),
    },
    options.timeoutMs,
  );
}

/**
 * Whether the check's shell sourced the snapshot without a word on stderr and went on: `stdout` and
 * `stderr` are the check's own (latin1). `noise` is what it printed outside the sourcing.
 */
function judgeLoad(
  marker: string,
  shell: string,
  result:
    | { outcome: 'exited'; status: ExitStatus; stdout: string; stderr: string }
    | { outcome: 'timeout' | 'aborted' | 'too-large'; stdout: string; stderr: string },
  timeoutMs = DEFAULT_SNAPSHOT_TIMEOUT_MS,
): { problem?: string; noise: string } {
  const prefix = `the snapshot does not load in ${shell} -c`;
  const { stderr } = result;
  const start = stderr.indexOf(`${marker}:load\n`);
  const end = stderr.indexOf(`${marker}:loaded\n`);
  const during = start >= 0 ? stderr.slice(start + marker.length + 6, end >= 0 ? end : undefined) : stderr;
  const noise = joinDiagnostics(
    utf8(start >= 0 ? stderr.slice(0, start) : ''),
    utf8(end >= 0 ? stderr.slice(end + marker.length + 8) : ''),
    utf8(result.stdout.replace(`${marker}:ok`, '')),
  );
  if (result.outcome !== 'exited') {
    const problem = {
      timeout: `${prefix} within ${timeoutMs} ms`,
      aborted: 'the capture was cancelled',
      'too-large': `${prefix}: it printed too much`,
    }[result.outcome];
    return { problem, noise };
  }
  const { status } = result;
  const errors = clip(utf8(during).trim());
  if (errors !== '') return { problem: `${prefix} without errors: ${errors}`, noise };
  if (status.exitCode !== 0 || !result.stdout.includes(`${marker}:ok`))
    return {
      problem: `${prefix}: the shell ${status.signal ? `was killed by ${status.signal}` : `exited with code ${status.exitCode}`} before the command`,
      noise,
    };
  return { noise };
}

function invalidOption(options: CaptureShellSnapshotOptions, timeoutMs: number): string | undefined {
  if (typeof options.shell !== 'string' || options.shell === '') return 'no shell was given';
  if (options.kind !== 'bash' && options.kind !== 'zsh' && options.kind !== 'sh')
    return `unknown shell kind ${JSON.stringify(options.kind)} (expected bash, zsh or sh)`;
  if (typeof options.file !== 'string' || options.file === '') return 'no snapshot file was given';
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
    return `timeoutMs must be a positive number, got ${timeoutMs}`;
  return undefined;
}

const SYNTAX_ERROR = /(syntax|parse) error/i;

/** The first line of stderr that reports a syntax error in a login file, if any (bash, zsh, dash wording). */
function syntaxErrorLine(stderr: string): string | undefined {
  return stderr
    .split('\n')
    .find((line) => SYNTAX_ERROR.test(line))
    ?.trim();
}

/** Trimmed non-empty pieces joined by newlines, clipped to a size that still explains. */
function joinDiagnostics(...pieces: string[]): string {
  return clip(
    pieces
      .map((piece) => piece.trim())
      .filter((piece) => piece !== '')
      .join('\n'),
  );
}

/** latin1 text (one char per byte) read as UTF-8. */
function utf8(latin1: string): string {
  return Buffer.from(latin1, 'latin1').toString('utf8');
}

/**
 * Every file a snapshot of `shell` depends on, as far as can be known without running it: the login
 * files (`snapshotLoginFiles`), the files they source by a literal path (`snapshotSourcedFiles`), and
 * the shell's own binary last (an upgraded shell may know other options).
 */
export function snapshotWatchedFiles(
  shell: string,
  kind: SnapshotShellKind,
  env: Record<string, string>,
  cwd: string,
): string[] {
  const login = snapshotLoginFiles(kind, env);
  const home = env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir();
  const watched = [...login, ...snapshotSourcedFiles(login, home)];
  const binary = shellBinary(shell, env, cwd);
  if (binary && !watched.includes(binary)) watched.push(binary);
  return watched;
}

/** The shell's binary, for freshness (an upgraded shell may know other options); undefined if not found. */
function shellBinary(shell: string, env: Record<string, string>, cwd: string): string | undefined {
  try {
    return resolveProgram([shell], env, cwd);
  } catch {
    return undefined;
  }
}

function clip(text: string): string {
  if (text.length <= MAX_DIAGNOSTICS_CHARS) return text;
  return `${text.slice(0, MAX_DIAGNOSTICS_CHARS)}\n[… ${text.length - MAX_DIAGNOSTICS_CHARS} more characters]`;
}
