import type { BashParser } from '../shell/bash-parser.js';
import { executableName, shellInvocation } from '../shell/shell-invocation.js';

// sudo options that take the next word as their value.
const SUDO_OPTIONS_WITH_VALUE = new Set([
  '-u',
  '-g',
  '-h',
  '-p',
  '-C',
  '-D',
  '-r',
  '-t',
  '-U',
  '-T',
  '-R',
  '--user',
  '--group',
  '--host',
  '--prompt',
  '--close-from',
  '--chdir',
  '--role',
  '--type',
  '--other-user',
  '--command-timeout',
  '--chroot',
]);

// Deep enough for `sudo env bash -c "sudo rm -f x"`, shallow enough to stop a pathological script.
const MAX_DEPTH = 8;

/**
 * Whether a command is dangerous enough to ask even where the sandbox would hold: `rm` with a force
 * option (`-f`, `-rf`, `-fr`, `-r -f`, `--force`), also behind `sudo` or `env`, and in any command of a
 * `bash|zsh|sh -c` script, including commands nested in substitutions, loops and subshells.
 * `words` may contain `null` for words the shell would expand; they never count as options.
 */
export function isDangerousCommand(
  words: readonly (string | null)[],
  options: { bash: BashParser },
): boolean {
  return dangerous(words, options.bash, 0);
}

function dangerous(words: readonly (string | null)[], bash: BashParser, depth: number): boolean {
  const program = words[0];
  if (depth > MAX_DEPTH || program === null || program === undefined) return false;
  switch (executableName(program)) {
    case 'rm':
      return hasForceOption(words.slice(1));
    case 'sudo':
      return dangerous(afterSudoOptions(words), bash, depth + 1);
    case 'env':
      return dangerous(afterEnvPrefix(words), bash, depth + 1);
  }
  if (words.some((word) => word === null)) return false;
  const invocation = shellInvocation(words as string[]);
  if (!invocation) return false;
  return bash
    .analyze(invocation.script)
    .commands.some((command) => dangerous(command.words, bash, depth + 1));
}

function hasForceOption(args: readonly (string | null)[]): boolean {
  for (const arg of args) {
    if (arg === '--') return false;
    if (arg === null) continue;
    if (arg === '--force') return true;
    if (arg.startsWith('-') && !arg.startsWith('--') && arg.includes('f')) return true;
  }
  return false;
}

function afterSudoOptions(words: readonly (string | null)[]): readonly (string | null)[] {
  let i = 1;
  while (i < words.length) {
    const word = words[i];
    if (word === '--') return words.slice(i + 1);
    if (typeof word !== 'string' || !word.startsWith('-')) break;
    i += SUDO_OPTIONS_WITH_VALUE.has(word) ? 2 : 1;
  }
  return words.slice(i);
}

function afterEnvPrefix(words: readonly (string | null)[]): readonly (string | null)[] {
  let i = 1;
  while (i < words.length) {
    const word = words[i];
    if (word === '--') return words.slice(i + 1);
    if (typeof word !== 'string') break;
    if (word === '-i' || word === '--ignore-environment' || word.startsWith('--unset=')) i += 1;
    else if (word === '-u' || word === '--unset') i += 2;
    else if (!word.startsWith('-') && word.indexOf('=') > 0) i += 1;
    else break;
  }
  return words.slice(i);
}
