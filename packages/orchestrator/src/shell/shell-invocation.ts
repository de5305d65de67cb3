/** A `bash|zsh|sh -c|-lc <script>` argv, split into its parts. */
export interface ShellInvocation {
  shell: string;
  flag: '-c' | '-lc';
  script: string;
}

const SHELLS = new Set(['bash', 'zsh', 'sh']);

/**
 * Recognises the argv the door builds for a POSIX shell: exactly `[shell, -c|-lc, script]` where the
 * shell's file name is bash, zsh or sh. Anything else (more words, other flags) is not a shell script
 * to policy; it is judged as the argv it is.
 */
export function shellInvocation(argv: readonly string[]): ShellInvocation | null {
  if (argv.length !== 3) return null;
  const [shell, flag, script] = argv as [string, string, string];
  if (flag !== '-c' && flag !== '-lc') return null;
  if (!SHELLS.has(executableName(shell))) return null;
  return { shell, flag, script };
}

/** The file name of a program path (`/usr/bin/git` → `git`). */
export function executableName(program: string): string {
  const slash = program.lastIndexOf('/');
  return slash === -1 ? program : program.slice(slash + 1);
}
