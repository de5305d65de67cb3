import { execFile } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type ZshForkVerification = { ok: true; version: string } | { ok: false; reason: string; fix: string };

export interface VerifyZshForkOptions {
  /** Per zsh run; the three runs take a few milliseconds each. */
  timeoutMs?: number;
  /** The command that rebuilds the fork, named in the fixes. */
  buildCommand?: string;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  error?: NodeJS.ErrnoException;
}

/**
 * The smoke test of the exec-wrapper contract, on a real zsh. With a logging wrapper as
 * `EXEC_WRAPPER`, `zsh -fc '/bin/echo smoke'` must call it with `/bin/echo` as `$1`, then argv as
 * typed (`/bin/echo smoke`); `echo smoke` found through PATH must give `/bin/echo`, then `echo smoke`;
 * the wrapper must be able to run them (`exec "$file" "$@"`). Without `EXEC_WRAPPER`, or with a blank
 * one, nothing is intercepted, and a command that is not found never reaches the wrapper. Never
 * throws: a failure says what is wrong and how to fix it.
 */
export async function verifyZshFork(
  zshPath: string,
  options: VerifyZshForkOptions = {},
): Promise<ZshForkVerification> {
  const build = options.buildCommand ?? 'ux zsh-fork build';
  const problem = usableFile(zshPath);
  if (problem) return { ok: false, reason: problem, fix: `build it with: ${build}` };

  const dir = mkdtempSync(join(tmpdir(), 'ux-zsh-fork-verify-'));
  try {
    const log = join(dir, 'wrapper.log');
    const wrapper = join(dir, 'wrapper.sh');
    // One line per argument, then run the program as the real wrapper's Run path does.
    writeFileSync(
      wrapper,
      `#!/bin/sh\nprintf '%s\\n' "$@" >> ${shellQuote(log)}\nfile=$1\nshift 2\nexec "$file" "$@"\n`,
      { mode: 0o755 },
    );
    const env = { PATH: '/usr/bin:/bin', HOME: dir, LC_ALL: 'C' };
    const run = (script: string, wrapperValue?: string, path = env.PATH) =>
      runZsh(
        zshPath,
        script,
        { ...env, PATH: path, ...(wrapperValue === undefined ? {} : { EXEC_WRAPPER: wrapperValue }) },
        dir,
        options,
      );
    const logged = () => {
      try {
        return readFileSync(log, 'utf8');
      } catch {
        return '';
      }
    };

    const version = await runZsh(zshPath, '', env, dir, options, ['--version']);
    const match = /^zsh (\S+)/.exec(version.stdout);
    if (version.error || version.code !== 0 || !match)
      return {
        ok: false,
        reason: `${zshPath} does not run as zsh (${describeRun(version)})`,
        fix: `point zsh_fork.zsh_path at the patched zsh, or build it with: ${build}`,
      };
    const zshVersion = match[1]!;

    // By path, then by name through PATH (with the builtin echo disabled): the wrapper gets the
    // resolved file, then argv as zsh built it (argv[0] is the word as typed).
    const wrapped = await run('/bin/echo smoke; disable echo; echo smoke', wrapper, '/bin:/usr/bin');
    const seen = logged().split('\n').slice(0, -1);
    if (seen.length === 0)
      return {
        ok: false,
        reason: `${zshPath} (zsh ${zshVersion}) ran /bin/echo without calling EXEC_WRAPPER: it is not the patched zsh`,
        fix: `build the patched zsh with: ${build}, or point zsh_fork.zsh_path at one`,
      };
    const expected = ['/bin/echo', '/bin/echo', 'smoke', '/bin/echo', 'echo', 'smoke'];
    if (seen.join('\n') !== expected.join('\n'))
      return {
        ok: false,
        reason: `EXEC_WRAPPER was called with ${JSON.stringify(seen)}; expected ${JSON.stringify(expected)} (for each exec: the program's path, then its argv)`,
        fix: `rebuild it with the current patch: ${build}`,
      };
    if (wrapped.code !== 0 || wrapped.stdout !== 'smoke\nsmoke\n')
      return {
        ok: false,
        reason: `the wrapper could not run the intercepted program (${describeRun(wrapped)})`,
        fix: `rebuild it with: ${build}`,
      };

    rmSync(log, { force: true });
    const plain = await run('/bin/echo plain');
    const blank = await run('/bin/echo blank', ` ${wrapper}`);
    const missing = await run('ux-zsh-fork-verify-no-such-command', wrapper);
    const leaked = logged();
    if (leaked !== '' || plain.stdout !== 'plain\n' || blank.stdout !== 'blank\n' || missing.code !== 127)
      return {
        ok: false,
        reason:
          leaked !== ''
            ? `EXEC_WRAPPER was called when it must not be (unset, blank, or for a command that does not exist): ${JSON.stringify(leaked.split('\n').slice(0, -1))}`
            : `commands without a wrapper did not run normally (plain: ${describeRun(plain)}; blank: ${describeRun(blank)}; not found: ${describeRun(missing)})`,
        fix: `rebuild it with the current patch: ${build}`,
      };
    return { ok: true, version: zshVersion };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Undefined when `path` is an executable file, else what is wrong with it. */
function usableFile(path: string): string | undefined {
  try {
    if (!statSync(path).isFile()) return `${path} is not a file`;
  } catch {
    return `no patched zsh at ${path}`;
  }
  try {
    accessSync(path, constants.X_OK);
  } catch {
    return `${path} is not executable`;
  }
  return undefined;
}

function runZsh(
  zsh: string,
  script: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
  options: VerifyZshForkOptions,
  args: string[] = ['-fc', script],
): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      zsh,
      args,
      { env, cwd, timeout: options.timeoutMs ?? 10_000, killSignal: 'SIGKILL', encoding: 'utf8' },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        const spawnError =
          error && typeof error.code === 'string' ? (error as NodeJS.ErrnoException) : undefined;
        resolve({ code, stdout, stderr, ...(spawnError ? { error: spawnError } : {}) });
      },
    );
  });
}

function describeRun(run: Run): string {
  if (run.error) return run.error.message;
  const stderr = run.stderr.trim().split('\n').slice(-3).join(' | ');
  return `exit ${run.code ?? 'by signal'}, stdout ${JSON.stringify(run.stdout.slice(0, 200))}${stderr ? `, stderr ${JSON.stringify(stderr)}` : ''}`;
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}
