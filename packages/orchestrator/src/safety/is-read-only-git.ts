import { executableName } from '../shell/shell-invocation.js';

const READ_ONLY_SUBCOMMANDS = new Set(['status', 'log', 'diff', 'show', 'branch']);

// Global options that take the next word as their value (`git -C dir status`).
const GLOBAL_OPTIONS_WITH_VALUE = new Set([
  '-C',
  '-c',
  '--config-env',
  '--exec-path',
  '--git-dir',
  '--namespace',
  '--super-prefix',
  '--work-tree',
]);

// Global options that point git at other config, repositories or programs, or start a pager. Any of
// them turns a read into something that can run code or write elsewhere.
const UNSAFE_GLOBAL_EXACT = new Set([...GLOBAL_OPTIONS_WITH_VALUE, '-p', '--paginate']);
const UNSAFE_GLOBAL_PREFIXES = [
  '--config-env=',
  '--exec-path=',
  '--git-dir=',
  '--namespace=',
  '--super-prefix=',
  '--work-tree=',
];

// Subcommand options that write files or run external programs.
const UNSAFE_SUBCOMMAND_EXACT = new Set(['--output', '--ext-diff', '--textconv', '--exec']);
const UNSAFE_SUBCOMMAND_PREFIXES = ['--output=', '--exec='];

// `git branch` only lists with these; anything else (a name, -d, -m, -c) changes branches.
const BRANCH_LISTING_FLAGS = new Set([
  '--list',
  '-l',
  '--show-current',
  '-a',
  '--all',
  '-r',
  '--remotes',
  '-v',
  '-vv',
  '--verbose',
]);

/** `git status|log|diff|show|branch` with read-only arguments and no unsafe global option. */
export function isReadOnlyGit(argv: readonly string[]): boolean {
  if (argv.length === 0 || executableName(argv[0]!) !== 'git') return false;
  const index = subcommandIndex(argv);
  if (index === -1) return false;
  const globals = argv.slice(1, index);
  if (globals.some(isUnsafeGlobal)) return false;
  const args = argv.slice(index + 1);
  if (args.some(isUnsafeSubcommandOption)) return false;
  if (argv[index] === 'branch') return isListingBranch(args);
  return true;
}

/** Index of the subcommand: the first word that is not a global option or its value. */
function subcommandIndex(argv: readonly string[]): number {
  for (let i = 1; i < argv.length; i++) {
    const word = argv[i]!;
    if (GLOBAL_OPTIONS_WITH_VALUE.has(word)) {
      i++;
      continue;
    }
    if (word.startsWith('-')) continue;
    // Git's first non-option word is the subcommand; later words are never reinterpreted as one.
    return READ_ONLY_SUBCOMMANDS.has(word) ? i : -1;
  }
  return -1;
}

function isUnsafeGlobal(word: string): boolean {
  if (UNSAFE_GLOBAL_EXACT.has(word)) return true;
  // `-Cdir`, `-ckey=value`
  if ((word.startsWith('-C') || word.startsWith('-c')) && !word.startsWith('--') && word.length > 2)
    return true;
  return UNSAFE_GLOBAL_PREFIXES.some((prefix) => word.startsWith(prefix));
}

function isUnsafeSubcommandOption(word: string): boolean {
  return (
    UNSAFE_SUBCOMMAND_EXACT.has(word) || UNSAFE_SUBCOMMAND_PREFIXES.some((prefix) => word.startsWith(prefix))
  );
}

function isListingBranch(args: readonly string[]): boolean {
  if (args.length === 0) return true;
  let listing = false;
  for (const arg of args) {
    if (BRANCH_LISTING_FLAGS.has(arg) || arg.startsWith('--format=')) listing = true;
    else return false;
  }
  return listing;
}
