import { quotePosix } from './quote-posix.js';
import type { SnapshotShellKind } from './snapshot-shell-kind.js';

/**
 * The `-c` script a command runs with a snapshot: the snapshot sourced by the same shell process (no
 * extra exec), then the command.
 *
 * zsh parses a whole `-c` string before running any of it, so aliases defined by the snapshot would not
 * apply to a command in the same string: for zsh, and when `kind` is not given, the command is handed to
 * `eval` (one quoted word; `$0`, `"$@"`, exit status and `exit` behave as without it). For bash and sh,
 * which read a `-c` string a line at a time, the command follows on its own line and keeps bash's
 * `-c` error prefixes.
 */
export function snapshotCommandScript(snapshotFile: string, cmd: string, kind?: SnapshotShellKind): string {
  // `.` looks a name without a slash up in PATH: never let it.
  const path = snapshotFile.includes('/') ? snapshotFile : `./${snapshotFile}`;
  const source = `. ${quotePosix(path)}`;
  if (kind === 'bash' || kind === 'sh') return `${source}\n${cmd}`;
  return `${source}\neval ${quotePosix(cmd)}`;
}
