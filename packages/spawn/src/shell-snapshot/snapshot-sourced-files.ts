import { closeSync, constants as fs, fstatSync, openSync, readSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';

/** At most this many files are followed in all, and at most this deep. */
const MAX_FILES = 64;
const MAX_DEPTH = 4;
/** Only this much of each file is read: login files are small; a huge one is not scanned past it. */
const MAX_READ_BYTES = 256 * 1024;

/**
 * The files the login files `source` (or `.`) by a literal path, found by reading them, and those files'
 * own literal sources, recursively (bounded): `. ~/.bash_aliases`, `source "$HOME/.config/sh/env"`,
 * `[ -f /etc/bash_completion ] && . /etc/bash_completion`. Only what is knowable without running a
 * shell: a path built from other variables, a loop over a directory, or a `$(…)` is not followed (the
 * freshness of a snapshot then rests on the files that are known). `~` and `$HOME`/`${HOME}` mean `home`.
 * Paths that do not exist are listed too (creating one makes a snapshot stale). Sorted, without
 * `loginFiles` themselves.
 */
export function snapshotSourcedFiles(loginFiles: readonly string[], home: string): string[] {
  const seen = new Set(loginFiles);
  const found = new Set<string>();
  let frontier = [...loginFiles];
  for (let depth = 0; depth < MAX_DEPTH && frontier.length > 0; depth++) {
    const next: string[] = [];
    for (const file of frontier) {
      for (const path of sourcedBy(readSmallText(file), home)) {
        if (seen.has(path) || seen.size >= MAX_FILES + loginFiles.length) continue;
        seen.add(path);
        found.add(path);
        next.push(path);
      }
    }
    frontier = next;
  }
  return [...found].sort();
}

/** The literal paths one file's text sources (see `snapshotSourcedFiles`). */
export function sourcedBy(text: string | undefined, home: string): string[] {
  if (!text) return [];
  const paths: string[] = [];
  // A `.` or `source` at the start of a command: line start, or after `;`, `&&`, `||`, `then`, `do`, `{`.
  const command = /(?:^|[;&|{]|\bthen|\bdo|\belse)\s*(?:\.|source)\s+("[^"\n]*"|'[^'\n]*'|[^\s;&|)]+)/gm;
  for (const line of text.split('\n')) {
    const code = line.replace(/^\s*#.*$/, '');
    for (const match of code.matchAll(command)) {
      const path = literalPath(match[1]!, home);
      if (path) paths.push(path);
    }
  }
  return paths;
}

function literalPath(word: string, home: string): string | undefined {
  let path = word;
  const quote = path[0];
  if (quote === "'" || quote === '"') path = path.slice(1, -1);
  if (quote !== "'") {
    path = path.replace(/^~(?=\/|$)/, home).replace(/\$\{HOME\}|\$HOME(?![A-Za-z0-9_])/g, home);
    if (/[$`*?[\\]/.test(path)) return undefined;
  }
  return isAbsolute(path) ? join(path) : undefined;
}

/** A regular file's first bytes as text, or undefined (missing, not a regular file, unreadable). */
function readSmallText(path: string): string | undefined {
  let fd: number;
  try {
    // Non-blocking: a FIFO planted under a login file's name must not hang the scan.
    fd = openSync(path, fs.O_RDONLY | fs.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return undefined;
    const buffer = Buffer.alloc(Math.min(stat.size, MAX_READ_BYTES));
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    return buffer.subarray(0, read).toString('utf8');
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
