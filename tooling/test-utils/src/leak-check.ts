import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';

/** What this process has running and open at one moment. */
export interface ProcessSnapshot {
  /** Live (non-zombie) descendants of this process. */
  descendants: { pid: number; command: string }[];
  /** Open descriptors of kinds children leak: pipes, sockets, terminals. fd → target. */
  fds: Map<number, string>;
}

const LEAKABLE = /^(pipe:|socket:|anon_inode:|\/dev\/pts\/|\/dev\/ptmx)/;

/** Reads /proc for this process's descendants and leak-prone descriptors. */
export function snapshotProcess(): ProcessSnapshot {
  const parents = new Map<number, number[]>();
  const info = new Map<number, { state: string; command: string }>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const [state, ppid] = stat.slice(close + 2).split(' ');
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      info.set(pid, { state: state ?? '?', command });
      const siblings = parents.get(Number(ppid)) ?? [];
      siblings.push(pid);
      parents.set(Number(ppid), siblings);
    } catch {
      // The process ended while we looked.
    }
  }
  const descendants: ProcessSnapshot['descendants'] = [];
  const queue = [...(parents.get(process.pid) ?? [])];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    const entry = info.get(pid);
    if (entry && entry.state !== 'Z') descendants.push({ pid, command: entry.command });
    queue.push(...(parents.get(pid) ?? []));
  }
  const fds = new Map<number, string>();
  for (const name of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${name}`);
      if (LEAKABLE.test(target)) fds.set(Number(name), target);
    } catch {
      // Closed while we looked (the readdir's own fd, for one).
    }
  }
  return { descendants, fds };
}

/**
 * Waits (up to `timeoutMs`) for every descendant started since `baseline` to end and every leak-prone
 * descriptor opened since then to close; throws a message naming what is left. Processes and
 * descriptors that already existed at the baseline (a host reaper started in `beforeAll`, say) are not
 * leaks of the suite.
 */
export async function expectNoLeaks(baseline: ProcessSnapshot, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const now = snapshotProcess();
    const known = new Set(baseline.descendants.map((d) => d.pid));
    const extraProcesses = now.descendants.filter((d) => !known.has(d.pid));
    const extraFds = [...now.fds].filter(([fd, target]) => baseline.fds.get(fd) !== target);
    if (extraProcesses.length === 0 && extraFds.length === 0) return;
    if (Date.now() >= deadline) {
      const lines = [
        ...extraProcesses.map((d) => `process ${d.pid} still running: ${d.command}`),
        ...extraFds.map(([fd, target]) => `fd ${fd} still open: ${target}`),
      ];
      throw new Error(`leaked after the suite:\n  ${lines.join('\n  ')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Registers a leak check around the current file or describe block. */
export function useLeakCheck(timeoutMs?: number): void {
  let baseline: ProcessSnapshot | undefined;
  beforeAll(() => {
    baseline = snapshotProcess();
  });
  afterAll(async () => {
    if (baseline) await expectNoLeaks(baseline, timeoutMs);
  });
}
