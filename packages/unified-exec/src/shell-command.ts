import { beginStreaming } from './begin-streaming.js';
import { CollectedOutput } from './collected-output.js';
import type { DoorContext } from './door-context.js';
import { resolveEnvironment, shellFor, workdirIn } from './door-environments.js';
import { execCommandEndEvent } from './exec-command-end-event.js';
import { interceptApplyPatch } from './intercept-apply-patch.js';
import { orchestrateLaunch } from './orchestrate-launch.js';
import { PausableTimer } from './pausable-timer.js';
import { collectedText } from './render-response.js';
import { resolveArgv } from './resolve-argv.js';
import { shellCommandArguments } from './tool-arguments.js';
import { abortedText, type CallContext, failure, type ToolResponse } from './tool-response.js';

/** How long a one-shot command may run when the call does not say. */
export const DEFAULT_SHELL_COMMAND_TIMEOUT_MS = 10_000;
/** The exit code reported for a command killed at its timeout (as `timeout(1)` does). */
export const TIMEOUT_EXIT_CODE = 124;

/**
 * The standalone one-shot tool, offered when unified exec is not: it goes through the same orchestrator
 * (approvals, sandbox, retries) and the same spawner, waits for the exit, and kills the whole process
 * group at the timeout. The proof that policy is written once.
 */
export async function shellCommand(
  door: DoorContext,
  raw: unknown,
  context: CallContext,
): Promise<ToolResponse> {
  const parsed = await shellCommandArguments(raw);
  if (!parsed.success) return failure(parsed.error.message, parsed.error);
  const args = parsed.data;
  // shell_command has no environment_id: it runs where the session's commands run by default.
  const where = resolveEnvironment(door, undefined);
  if (!where.ok) return failure(where.message);
  const environment = where.environment;
  const cwd = workdirIn(environment, args.workdir);
  if (!environment.remote) {
    const patched = await interceptApplyPatch(door, args.command, cwd, context);
    if (patched) return patched;
  }
  const argvResult = resolveArgv(
    { cmd: args.command, ...shellFor(door, environment) },
    environment.remote ? 'linux' : process.platform,
  );
  if (!argvResult.ok) return failure(argvResult.message);
  const argv = argvResult.argv;
  const id = door.store.allocate();
  const call = door.callSignal(context.signal);
  const startedAt = Date.now();
  try {
    const launch = await orchestrateLaunch(
      door,
      'shell_command',
      environment,
      { argv, cwd, tty: false, signal: call.signal },
      context,
    );
    if ('failure' in launch) return launch.failure;
    const { outcome } = launch;
    if (outcome.status === 'denied') {
      if (outcome.value.tracker.outputClosed) await outcome.value.settled();
      return render(
        outcome.denial.exitCode,
        collectedText(outcome.denial.output),
        0,
        undefined,
        outcome.value.notices.takeUnreported(),
      );
    }

    const { process, tracker } = outcome.value;
    const stream = beginStreaming(door, {
      callId: context.callId,
      processId: id,
      argv,
      cwd,
      source: 'shell_command',
      launched: outcome.value,
    });
    // What the early-exit window caught is in the tracker; everything later is counted as it comes.
    const output = new CollectedOutput();
    output.pushParts(tracker.buffer.drainParts());
    process.onOutput((chunk) => output.push(chunk));
    const timeoutMs = args.timeout_ms ?? DEFAULT_SHELL_COMMAND_TIMEOUT_MS;
    let timedOut = false;
    // The clock stops while a per-exec approval waits for a person (the zsh fork), as Codex's does.
    const timer = new PausableTimer(timeoutMs, () => {
      timedOut = true;
      void process.terminate();
    });
    const { interception } = launch;
    interception?.onPendingChange(() => timer.setPaused(interception.pending > 0));
    timer.setPaused((interception?.pending ?? 0) > 0);
    const ended = await Promise.race([
      process.closed.then(() => 'closed' as const),
      new Promise<'aborted'>((resolve) =>
        call.signal.addEventListener('abort', () => resolve('aborted'), { once: true }),
      ),
    ]);
    timer.clear();
    if (ended === 'aborted') {
      // A one-shot command has no session to come back to: stopping the wait stops the command.
      await process.terminate();
      await process.closed;
    }
    const status = process.exitStatus();
    await stream.drained;
    await outcome.value.settled();
    const exitCode = timedOut ? TIMEOUT_EXIT_CODE : (status?.exitCode ?? -1);
    const wallTimeMs = Date.now() - startedAt;
    door.emit(
      execCommandEndEvent({
        callId: context.callId,
        processId: id,
        command: argv,
        cwd,
        source: 'shell_command',
        exitCode,
        stream,
        collected: output.text(),
        durationMs: wallTimeMs,
      }),
    );
    if (ended === 'aborted') return { text: abortedText(startedAt), success: false, aborted: true };
    return render(
      exitCode,
      output,
      wallTimeMs,
      timedOut ? timeoutMs : undefined,
      outcome.value.notices.takeUnreported(),
    );
  } finally {
    door.store.release(id);
    call.done();
  }

  function render(
    exitCode: number,
    output: CollectedOutput,
    wallTimeMs: number,
    timedOutAfter: number | undefined,
    notices: readonly string[],
  ): ToolResponse {
    const body = output.truncated(door.toolOutputTokenLimit);
    const sandbox = notices.map((notice) => `Sandbox: ${notice}\n`).join('');
    const note =
      timedOutAfter === undefined
        ? ''
        : `\ncommand timed out after ${timedOutAfter} ms; its process group was killed`;
    return {
      text: `Exit code: ${exitCode}\nWall time: ${(wallTimeMs / 1000).toFixed(1)} seconds\n${sandbox}Output:\n${body}${note}`,
      success: true,
    };
  }
}
