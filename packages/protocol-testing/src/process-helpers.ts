import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { ExecProcess } from '@ux/protocol/core';
import { within } from './conformance-check.js';

/** Collects a process's output until it closes; returns the bytes and the exit status. */
export async function runToEnd(process: ExecProcess, timeoutMs = 10_000) {
  const chunks: Uint8Array[] = [];
  process.onOutput((chunk) => chunks.push(Uint8Array.from(chunk)));
  const status = await within(timeoutMs, process.exited, 'the process to exit');
  await within(timeoutMs, process.closed, 'the output to close');
  const output = Buffer.concat(chunks);
  return { status, output, text: output.toString('utf8') };
}

/** Resolves when the accumulated output contains `needle`. */
export function waitForOutput(process: ExecProcess, needle: string, timeoutMs = 5_000): Promise<string> {
  let seen = '';
  let unsubscribe: () => void = () => {};
  const found = new Promise<string>((resolve) => {
    unsubscribe = process.onOutput((chunk) => {
      seen += Buffer.from(chunk).toString('utf8');
      if (seen.includes(needle)) resolve(seen);
    });
  });
  return within(timeoutMs, found, `output containing ${JSON.stringify(needle)}`).finally(() => unsubscribe());
}

/** Whether a pid names a live (non-zombie) process. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    if (process.platform === 'linux') return false;
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
}

/** Polls until `pid` is gone or the time runs out. */
export async function waitUntilDead(pid: number, timeoutMs = 3_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return !isAlive(pid);
}

/**
 * Waits until process `pid` runs a program whose name contains `name` (read from /proc on Linux;
 * elsewhere it waits a fixed 200 ms).
 */
export async function waitForImage(pid: number | undefined, name: string, timeoutMs = 3_000): Promise<void> {
  if (pid === undefined || process.platform !== 'linux') {
    await new Promise((resolve) => setTimeout(resolve, 200));
    return;
  }
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]!.includes(name)) return;
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Every live descendant of `pid` (children, their children, …), read from `ps` (Linux and macOS). */
export function descendantPids(pid: number): number[] {
  const children = new Map<number, number[]>();
  const listing = execFileSync('ps', ['-A', '-o', 'pid=', '-o', 'ppid='], { encoding: 'utf8' });
  for (const line of listing.split('\n')) {
    const [child, parent] = line.trim().split(/\s+/).map(Number);
    if (!child || parent === undefined || Number.isNaN(parent)) continue;
    children.set(parent, [...(children.get(parent) ?? []), child]);
  }
  const found: number[] = [];
  const queue = [...(children.get(pid) ?? [])];
  while (queue.length > 0) {
    const next = queue.shift()!;
    if (isAlive(next)) found.push(next);
    queue.push(...(children.get(next) ?? []));
  }
  return found;
}
