/**
 * The shell line that puts `dirs` first on PATH, `export PATH='a':'b':"$PATH"` and a newline, or ''
 * when there are none. Written before a script (after the login files ran, which may reset PATH) by the
 * door for its own directories and by the exec-server client for a server's `prependPathDirs`.
 */
export function prependPathLine(dirs: readonly string[]): string {
  if (dirs.length === 0) return '';
  const quoted = dirs.map((dir) => `'${dir.replace(/'/g, `'\\''`)}'`).join(':');
  return `export PATH=${quoted}:"$PATH"\n`;
}
