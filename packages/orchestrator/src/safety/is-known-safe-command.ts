import type { BashParser } from '../shell/bash-parser.js';
import { executableName, shellInvocation } from '../shell/shell-invocation.js';
import { isReadOnlyGit } from './is-read-only-git.js';

// Programs that only read, whatever their arguments.
const ALWAYS_SAFE = new Set([
  'cat',
  'cd',
  'cut',
  'echo',
  'expr',
  'false',
  'grep',
  'head',
  'id',
  'ls',
  'nl',
  'paste',
  'pwd',
  'rev',
  'seq',
  'stat',
  'tail',
  'tr',
  'true',
  'uname',
  'uniq',
  'wc',
  'which',
  'whoami',
]);
// GNU coreutils only; the BSD tools of the same name are not audited.
const LINUX_ONLY_SAFE = new Set(['numfmt', 'tac']);

// find actions that run programs, delete, or write files.
const UNSAFE_FIND = new Set([
  '-exec',
  '-execdir',
  '-ok',
  '-okdir',
  '-delete',
  '-fls',
  '-fprint',
  '-fprint0',
  '-fprintf',
]);

/**
 * Whether a command only reads and may run without asking under `untrusted`: a known-safe program
 * (numfmt and tac only on Linux), or a `bash|zsh|sh -c|-lc` script that is a plain list of such
 * commands. A heredoc, a redirection or any expansion makes a script not known-safe.
 */
export function isKnownSafeCommand(
  argv: readonly string[],
  options: { platform: NodeJS.Platform; bash: BashParser },
): boolean {
  if (isSafeToExec(argv, options.platform)) return true;
  const invocation = shellInvocation(argv);
  if (!invocation) return false;
  const plain = options.bash.analyze(invocation.script).plain;
  return (
    plain !== null && plain.length > 0 && plain.every((command) => isSafeToExec(command, options.platform))
  );
}

/** Whether one program invocation (no shell involved) is known to only read. */
export function isSafeToExec(argv: readonly string[], platform: NodeJS.Platform): boolean {
  if (argv.length === 0) return false;
  const name = executableName(argv[0]!);
  const args = argv.slice(1);
  if (ALWAYS_SAFE.has(name)) return true;
  if (LINUX_ONLY_SAFE.has(name)) return platform === 'linux';
  switch (name) {
    case 'base64':
      return !args.some(
        (arg) => arg === '-o' || arg === '--output' || arg.startsWith('--output=') || arg.startsWith('-o'),
      );
    case 'find':
      return !args.some((arg) => UNSAFE_FIND.has(arg));
    case 'rg':
      return !args.some(
        (arg) =>
          arg === '--search-zip' ||
          arg === '-z' ||
          arg === '--pre' ||
          arg.startsWith('--pre=') ||
          arg === '--hostname-bin' ||
          arg.startsWith('--hostname-bin='),
      );
    case 'git':
      return isReadOnlyGit(argv);
    case 'sed':
      return argv.length <= 4 && args[0] === '-n' && isSedPrint(args[1]);
    default:
      return false;
  }
}

/** `Np` or `M,Np` with decimal line numbers: print a line or a range, nothing else. */
function isSedPrint(script: string | undefined): boolean {
  if (script === undefined || !script.endsWith('p')) return false;
  const range = script.slice(0, -1).split(',');
  return (
    range.length <= 2 && range.every((part) => part !== '' && [...part].every((c) => c >= '0' && c <= '9'))
  );
}
