import type { ExecProcess, LaunchPlan, Spawner } from '@ux/protocol/core';
import { TERMINATE_GRACE_MS } from '@ux/protocol/core';
import { type ConformanceCheck, check, checkEqual, within } from './conformance-check.js';
import { descendantPids, isAlive, runToEnd, waitForOutput, waitUntilDead } from './process-helpers.js';
import { type StartedPlan, startPlan } from './start-plan.js';

/** Plans one shell script under the backend in a fresh workspace and runs the body with the plan. */
export type WithPlan = (
  script: string,
  tty: boolean,
  body: (plan: LaunchPlan) => Promise<void>,
) => Promise<void>;

// Short sleeps: bash runs a trap only once its foreground command ends, and a Ctrl-C that lands just
// before it forks the next sleep does not reach that sleep; the trap then waits the sleep out.
const TRAP_INT = "trap 'echo INT-TRAP; exit 42' INT; echo READY; while :; do sleep 1; done";
const TRAP_TERM = "trap 'echo TERM-TRAP; exit 43' TERM; echo READY; while :; do sleep 1; done";
const DEFAULT_INT = 'echo READY; exec sleep 30';
// The shell and a background child both ignore SIGTERM: only the SIGKILL that follows ends them.
const IGNORES_TERM = "trap '' TERM; (trap '' TERM; exec sleep 300) & echo READY; while :; do sleep 0.1; done";

/**
 * "Ctrl-C reaches the command, the wrapper survives; terminate kills all": the rule every sandbox
 * backend's wrapper must keep (see `LaunchPlan`). The pipe checks start plans with child_process in a
 * process group of their own, as a spawner does; with a `spawner`, the same checks run on a PTY
 * (Ctrl-C as the byte the terminal turns into SIGINT) and through its `interrupt()` / `terminate()`.
 */
export function sandboxSignalChecks(withPlan: WithPlan, spawner?: Spawner): Omit<ConformanceCheck, 'skip'>[] {
  const wait = 10_000;
  // Whatever a check started is killed when the plan ends, even when the check failed.
  const started: StartedPlan[] = [];
  const onCleanup = (run: StartedPlan) => started.push(run);
  const piped = (script: string, body: (plan: LaunchPlan) => Promise<void>) =>
    withPlan(script, false, async (plan) => {
      try {
        await body(plan);
      } finally {
        for (const run of started.splice(0)) run.kill();
      }
    });
  /** The INT trap started through `spawner`, Ctrl-C sent by `send`: INT-TRAP and exit code 42. */
  const trapThroughSpawner = (spawner: Spawner, tty: boolean, send: (child: ExecProcess) => Promise<void>) =>
    withPlan(TRAP_INT, tty, async (plan) => {
      const child = await spawner.spawn({
        argv: plan.argv,
        cwd: plan.cwd,
        env: plan.env,
        tty,
        stdin: tty ? 'pipe' : 'closed',
      });
      try {
        await waitForOutput(child, 'READY', wait);
        const rest = runToEnd(child, wait);
        await send(child);
        const { status, text } = await rest;
        check(text.includes('INT-TRAP'), `the INT trap did not run: ${JSON.stringify(text)}`);
        checkEqual(status.exitCode, 42, 'exit code after Ctrl-C');
      } finally {
        await child.terminate();
      }
    });
  const checks: Omit<ConformanceCheck, 'skip'>[] = [
    {
      name: 'signals: SIGINT to the process group reaches the command, the wrapper survives and exits with its code',
      run: () =>
        piped(TRAP_INT, async (plan) => {
          const run = startPlan(plan);
          onCleanup(run);
          await run.waitFor('READY');
          run.signalGroup('SIGINT');
          const result = await within(wait, run.done, 'the command to handle SIGINT and exit');
          check(
            result.output.includes('INT-TRAP'),
            `the INT trap did not run: ${JSON.stringify(result.output)}`,
          );
          checkEqual(
            result.exitCode,
            42,
            `exit code after the INT trap (output ${JSON.stringify(result.output)})`,
          );
        }),
    },
    {
      name: 'signals: a command without a SIGINT handler ends with 130',
      run: () =>
        piped(DEFAULT_INT, async (plan) => {
          const run = startPlan(plan);
          onCleanup(run);
          await run.waitFor('READY');
          run.signalGroup('SIGINT');
          const result = await within(wait, run.done, 'the command to die of SIGINT');
          checkEqual(
            result.exitCode,
            130,
            `exit code after SIGINT (output ${JSON.stringify(result.output)})`,
          );
        }),
    },
    {
      name: 'signals: SIGTERM to the process group reaches the command and leaves the wrapper running',
      run: () =>
        piped(TRAP_TERM, async (plan) => {
          const run = startPlan(plan);
          onCleanup(run);
          await run.waitFor('READY');
          run.signalGroup('SIGTERM');
          const result = await within(wait, run.done, 'the command to handle SIGTERM and exit');
          check(
            result.output.includes('TERM-TRAP'),
            `the TERM trap did not run: ${JSON.stringify(result.output)}`,
          );
          checkEqual(result.exitCode, 43, 'exit code after the TERM trap');
        }),
    },
    {
      name: 'signals: SIGTERM then SIGKILL of the group ends every process of the sandbox, wrapper included',
      run: () =>
        piped(IGNORES_TERM, async (plan) => {
          const run = startPlan(plan);
          onCleanup(run);
          await run.waitFor('READY');
          const pids = [run.pid, ...descendantPids(run.pid)];
          check(
            pids.length >= 2,
            `expected the command and its background child, found pids ${pids.join(', ')}`,
          );
          run.signalGroup('SIGTERM');
          await new Promise((resolve) => setTimeout(resolve, TERMINATE_GRACE_MS));
          check(isAlive(run.pid), 'SIGTERM ended the wrapper although the command ignores it');
          run.signalGroup('SIGKILL');
          await within(wait, run.done, 'the sandbox to end after SIGKILL');
          for (const pid of pids)
            check(await waitUntilDead(pid, 2_000), `process ${pid} outlived SIGKILL of the group`);
        }),
    },
  ];
  if (!spawner) return checks;
  return [
    ...checks,
    {
      name: 'signals (PTY): Ctrl-C typed on the terminal reaches the command, the wrapper survives',
      run: () => trapThroughSpawner(spawner, true, (child) => child.write('\u0003')),
    },
    {
      name: 'signals (spawner): interrupt() reaches the command, the wrapper survives',
      run: () => trapThroughSpawner(spawner, false, (child) => child.interrupt()),
    },
    {
      name: 'signals (spawner, PTY): terminate() ends every process of the sandbox, wrapper included',
      run: () =>
        withPlan(IGNORES_TERM, true, async (plan) => {
          const child = await spawner.spawn({
            argv: plan.argv,
            cwd: plan.cwd,
            env: plan.env,
            tty: true,
            stdin: 'pipe',
          });
          await waitForOutput(child, 'READY', wait);
          const pids = child.pid === undefined ? [] : [child.pid, ...descendantPids(child.pid)];
          check(
            pids.length >= 2,
            `expected the command and its background child, found pids ${pids.join(', ')}`,
          );
          await child.terminate();
          await within(wait, child.exited, 'exit after terminate()');
          for (const pid of pids)
            check(await waitUntilDead(pid, 2_000), `process ${pid} outlived terminate()`);
        }),
    },
  ];
}
