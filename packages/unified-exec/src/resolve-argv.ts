import type { ShellMode } from '@ux/features';

export interface ArgvInput {
  cmd: string;
  /** The `shell` argument of the call, if the model gave one. */
  shell?: string;
  /** The `login` argument of the call. */
  login?: boolean;
  /** The user's shell, for direct mode without a `shell` argument. */
  userShell: string;
  /** Config `allow_login_shell`. */
  allowLoginShell: boolean;
  shellMode: ShellMode;
}

export type ArgvResult = { ok: true; argv: string[] } | { ok: false; message: string };

/** Linux refuses one argument longer than this, its NUL included (MAX_ARG_STRLEN: 32 pages). */
export const MAX_ARGUMENT_BYTES = 32 * 4096;

/**
 * The argv of a command (docs/reference/door.md §3): `[shell, -lc|-c, cmd]` for POSIX shells,
 * `[pwsh, (-NoProfile), -Command, cmd]` for PowerShell, `[cmd.exe, /c, cmd]`. In zsh-fork mode the
 * configured zsh runs it and a `shell` argument is refused.
 */
export function resolveArgv(input: ArgvInput, platform: NodeJS.Platform = process.platform): ArgvResult {
  const result = argvFor(input);
  if (!result.ok || platform !== 'linux') return result;
  // The script is one argument of the shell: past the kernel's limit, exec fails with E2BIG.
  const bytes = Buffer.byteLength(input.cmd, 'utf8');
  if (bytes + 1 > MAX_ARGUMENT_BYTES) {
    return {
      ok: false,
      message: `the command is ${bytes} bytes; the limit here is ${MAX_ARGUMENT_BYTES - 1} bytes (Linux passes a command to its shell as one argument). Write a long script to a file and run the file. It begins: ${JSON.stringify(input.cmd.slice(0, 80))}…`,
    };
  }
  return result;
}

function argvFor(input: ArgvInput): ArgvResult {
  if (input.login === true && !input.allowLoginShell) {
    return { ok: false, message: 'login shell is disabled by config; omit `login` or set it to false.' };
  }
  const login = input.login ?? input.allowLoginShell;
  if (input.shellMode.kind === 'zsh-fork') {
    if (input.shell !== undefined) {
      return {
        ok: false,
        message:
          '`shell` is not supported in zsh-fork mode: commands run through the configured zsh; omit `shell`.',
      };
    }
    return { ok: true, argv: [input.shellMode.zshPath, login ? '-lc' : '-c', input.cmd] };
  }
  const shell = input.shell ?? input.userShell;
  const name = shell
    .split(/[\\/]/)
    .pop()!
    .toLowerCase()
    .replace(/\.exe$/, '');
  if (name === 'pwsh' || name === 'powershell') {
    return { ok: true, argv: [shell, ...(login ? [] : ['-NoProfile']), '-Command', input.cmd] };
  }
  if (name === 'cmd') return { ok: true, argv: [shell, '/c', input.cmd] };
  return { ok: true, argv: [shell, login ? '-lc' : '-c', input.cmd] };
}
