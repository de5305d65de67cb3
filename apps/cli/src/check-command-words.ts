import { UsageError } from './usage-error.js';

/**
 * The words after `ux exec --` must make a command a shell can run: not blank, and not starting with
 * "-", which `bash -lc` would take for an option of its own (`ux exec -- --version` printed bash's
 * version). Throws a usage error that says what was probably meant.
 */
export function checkCommandWords(words: readonly string[], helpCommand: string): void {
  if (words.every((word) => word.trim() === ''))
    throw new UsageError('the command is empty; give one after --, e.g. ux exec -- ls -la', helpCommand);
  const first = words[0]!;
  if (!first.startsWith('-')) return;
  const prefix = helpCommand.replace(/ --help$/, '');
  const meant =
    first === '--version'
      ? "; for ux's version, run: ux --version"
      : first === '--help' || first === '-h'
        ? `; for help, run: ${helpCommand}`
        : `; ${prefix}'s own options go before --`;
  throw new UsageError(
    `"${first}" is not a command: the words after -- are the command to run, and a shell would take a word starting with "-" for an option of its own${meant}`,
    helpCommand,
  );
}
