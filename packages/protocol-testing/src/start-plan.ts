import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import type { LaunchPlan } from '@ux/protocol/core';
import { within } from './conformance-check.js';
import { descendantPids } from './process-helpers.js';

/** A plan started on pipes, for checks that signal it while it runs. */
export interface StartedPlan {
  pid: number;
  waitFor(needle: string): Promise<void>;
  signalGroup(signal: NodeJS.Signals): void;
  done: Promise<{ exitCode: number; output: string }>;
  /** SIGKILL to the group and to every descendant, wherever it went (a failing backend's leftovers). */
  kill(): void;
}

/**
 * Starts a plan on pipes, leading a process group of its own (as spawners start commands); whatever is
 * still running after `safetyMs` is killed.
 */
export function startPlan(plan: LaunchPlan, safetyMs = 30_000): StartedPlan {
  const child = spawn(plan.argv[0]!, plan.argv.slice(1), {
    cwd: plan.cwd,
    env: plan.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const waiters = new Set<() => void>();
  // Descendants seen while it ran: a broken backend's escapees are no longer descendants once the
  // wrapper is gone, and must still be killed.
  const known = new Set<number>();
  const remember = () => {
    if (child.pid !== undefined) for (const pid of descendantPids(child.pid)) known.add(pid);
  };
  const onData = (data: Buffer) => {
    output += data.toString('utf8');
    for (const waiter of waiters) waiter();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const safety = setTimeout(() => signal(child.pid, 'SIGKILL'), safetyMs);
  const done = new Promise<{ exitCode: number; output: string }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, name) => {
      clearTimeout(safety);
      resolve({ exitCode: code ?? 128 + (name ? (constants.signals[name] ?? 0) : 0), output });
    });
  });
  return {
    pid: child.pid!,
    waitFor: (needle) =>
      within(
        10_000,
        new Promise<void>((resolve) => {
          const test = () => {
            if (output.includes(needle)) {
              waiters.delete(test);
              remember();
              resolve();
            }
          };
          waiters.add(test);
          test();
        }),
        `output containing ${JSON.stringify(needle)} (so far ${JSON.stringify(output)})`,
      ),
    signalGroup: (name) => signal(child.pid, name),
    done,
    kill: () => {
      remember();
      signal(child.pid, 'SIGKILL');
      for (const pid of known) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
    },
  };
}

function signal(pid: number | undefined, name: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, name);
  } catch {
    // The group is gone already.
  }
}
