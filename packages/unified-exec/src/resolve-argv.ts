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

/**
 * The argv of a command (spec §3.2 step 6): `[shell, -lc|-c, cmd]` for POSIX shells,
 * `[pwsh, (-NoProfile), -Command, cmd]` for PowerShell, `[cmd.exe, /c, cmd]`. In zsh-fork mode the
 * configured zsh runs it and a `shell` argument is refused.
 */
export function resolveArgv(input: ArgvInput): ArgvResult {
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
