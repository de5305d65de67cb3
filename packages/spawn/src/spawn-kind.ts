/** The shape a local process is started in. */
export type SpawnKind = 'pty' | 'pipe-with-stdin' | 'pipe';

export interface SpawnKindInput {
  tty: boolean;
  /** Keep a writable stdin without a PTY. */
  stdin?: 'pipe' | 'closed';
}

/**
 * The one place the shape is chosen: `tty` gives a PTY, a wanted stdin gives a pipe that keeps it, and
 * the rest get pipes without stdin. Where a command runs (this machine or a remote environment's
 * exec-server) is the door's choice, not this one.
 */
export function decideSpawnKind(input: SpawnKindInput): SpawnKind {
  if (input.tty) return 'pty';
  return input.stdin === 'pipe' ? 'pipe-with-stdin' : 'pipe';
}
