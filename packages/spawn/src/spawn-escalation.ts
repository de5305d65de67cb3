import type { SpawnEscalation, SpawnRequest } from '@ux/protocol/core';

/**
 * The descriptor at which a ZshFork command finds its escalation socket (`UX_ESCALATE_SOCKET`). Above
 * 9, because shell scripts use 0–9 for their own redirections, and clear of bwrap's launch (fd 3).
 */
export const ESCALATION_FD = 63;

/**
 * Connects a command to an escalation broker before it starts (ZshFork). The spawn helper creates a
 * datagram socketpair, hands the server end to the broker listening at `socketPath` with the
 * single-use `token`, and leaves the client end at `fd` (without close-on-exec) for the command. When
 * the broker refuses or is unreachable, the command does not run (exit 127, the reason on stderr).
 * The type is the contract's (`@ux/protocol`), which the broker's sessions hand out.
 */
export type { SpawnEscalation };

/** A spawn request for the local spawner: the protocol's request plus what only a local host can do. */
export interface LocalSpawnRequest extends SpawnRequest {
  /** Hand the command an escalation socket (ZshFork). Always goes through the spawn helper, PTY or pipe. */
  escalation?: SpawnEscalation;
}
