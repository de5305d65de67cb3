/**
 * Words as one line a person can paste into a POSIX shell: plain words as they are, anything else in
 * single quotes. For hints in messages only; commands that run are quoted by the orchestrator.
 */
export function displayCommand(words: readonly string[]): string {
  return words
    .map((word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`))
    .join(' ');
}
