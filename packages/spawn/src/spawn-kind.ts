/** The shape a process is started in. */
export type SpawnKind = 'pty' | 'pipe-with-stdin' | 'pipe' | 'exec-server';

export interface SpawnKindInput {
  tty: boolean;
  /** Keep a writable stdin without a PTY. */
  stdin?: 'pipe' | 'closed';
  /** The command runs in a remote environment. */
  remote?: boolean;
  /** The command needs a shell snapshot, which only an exec-server can restore. */
  shellSnapshot?: boolean;
}

/**
 * The one place the shape is chosen: a remote environment or a shell snapshot goes to an exec-server;
 * otherwise `tty` gives a PTY, a wanted stdin gives a pipe that keeps it, and the rest get pipes without
 * stdin.
 */
export function decideSpawnKind(input: SpawnKindInput): SpawnKind {
  if (input.remote || input.shellSnapshot) return 'exec-server';
  if (input.tty) return 'pty';
  return input.stdin === 'pipe' ? 'pipe-with-stdin' : 'pipe';
}
