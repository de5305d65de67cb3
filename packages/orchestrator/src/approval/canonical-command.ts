import type { BashParser } from '../shell/bash-parser.js';
import { shellInvocation } from '../shell/shell-invocation.js';

/** Marks a shell script that is not a single plain command, in approval keys. */
export const SHELL_SCRIPT_MARKER = '__ux_shell_script__';

/**
 * The command an approval is remembered for: the single plain command of a `bash|zsh|sh -c|-lc`
 * script (so `bash -lc "cargo test"` and `zsh -c "cargo test"` share one approval); otherwise the script
 * itself under a marker, `[SHELL_SCRIPT_MARKER, flag, script]`; otherwise the argv.
 */
export function canonicalCommand(argv: readonly string[], bash: BashParser): string[] {
  const invocation = shellInvocation(argv);
  if (!invocation) return [...argv];
  const plain = bash.analyze(invocation.script).plain;
  if (plain && plain.length === 1) return [...plain[0]!];
  return [SHELL_SCRIPT_MARKER, invocation.flag, invocation.script];
}
