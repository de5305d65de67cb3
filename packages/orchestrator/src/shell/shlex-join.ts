// Characters that never need quoting in a POSIX shell word.
const SAFE = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** Renders an argv as one shell command line, quoting only the words that need it. */
export function shlexJoin(argv: readonly (string | null)[]): string {
  return argv.map((word) => (word === null ? '…' : quote(word))).join(' ');
}

function quote(word: string): string {
  if (SAFE.test(word)) return word;
  return `'${word.split("'").join(`'"'"'`)}'`;
}
