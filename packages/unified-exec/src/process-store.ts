/** Most processes kept alive at once; starting one more prunes one. */
export const MAX_UNIFIED_EXEC_PROCESSES = 64;
/** The most recently used processes that pruning never picks. */
export const PRUNE_PROTECTED_RECENT = 8;

export interface StoredEntry {
  id: number;
  lastUsed: number;
  hasExited(): boolean;
  /** Tool calls waiting on it right now; such an entry is never pruned from under its call. */
  activeCalls?: number;
}

/**
 * Process ids and the live processes behind them. An id is reserved before anything is asked or
 * spawned and released on every path that does not end in a stored process. Ids are random in
 * [1000, 100000), or 1000, 1001, … in deterministic mode (tests).
 */
export class ProcessStore<E extends StoredEntry> {
  private readonly reserved = new Set<number>();
  private readonly entries = new Map<number, E>();

  constructor(private readonly deterministic = false) {}

  allocate(): number {
    for (;;) {
      const id = this.deterministic
        ? this.reserved.size === 0
          ? 1000
          : Math.max(...this.reserved) + 1
        : // An identifier to look a process up by, not a secret (every caller of this door may use
          // every session), so Math.random serves; loading node:crypto cost a short command ~3 ms.
          1000 + Math.floor(Math.random() * 99_000);
      if (!this.reserved.has(id)) {
        this.reserved.add(id);
        return id;
      }
    }
  }

  release(id: number): void {
    this.reserved.delete(id);
    this.entries.delete(id);
  }

  get(id: number): E | undefined {
    return this.entries.get(id);
  }

  get size(): number {
    return this.entries.size;
  }

  values(): E[] {
    return [...this.entries.values()];
  }

  /**
   * Stores an entry; when the store is full, first removes and returns the victim
   * (docs/reference/door.md §9): among all but the 8 most recently used, the least recently used that
   * has exited, else the least recently used. The caller kills it. An entry a tool call is still waiting on is never the victim (its call
   * would answer "Unknown process id" for a command it started); when every candidate is busy the store
   * holds one more than its cap until one is free.
   */
  store(entry: E): E | undefined {
    let victim: E | undefined;
    if (this.entries.size >= MAX_UNIFIED_EXEC_PROCESSES) {
      victim = pickVictim([...this.entries.values()]);
      if (victim) this.release(victim.id);
    }
    this.entries.set(entry.id, entry);
    return victim;
  }

  /** Empties the store and every reservation; returns what was stored. */
  drain(): E[] {
    const all = [...this.entries.values()];
    this.entries.clear();
    this.reserved.clear();
    return all;
  }
}

export function pickVictim<E extends StoredEntry>(entries: readonly E[]): E | undefined {
  const byRecency = [...entries].sort((a, b) => b.lastUsed - a.lastUsed);
  const candidates = byRecency
    .slice(PRUNE_PROTECTED_RECENT)
    .reverse()
    .filter((entry) => !entry.activeCalls);
  return candidates.find((entry) => entry.hasExited()) ?? candidates[0];
}
