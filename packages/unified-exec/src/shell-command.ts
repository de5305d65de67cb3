import { beginStreaming } from './begin-streaming.js';
import { emitBlockedCommand, emitDeniedCommand } from './blocked-command-events.js';
import { CollectedOutput } from './collected-output.js';
import { denialParts } from './denial-parts.js';
import type { DoorContext, SandboxLevel } from './door-context.js';
import { resolveEnvironment, shellFor, workdirIn } from './door-environments.js';
import { execCommandEndEvent } from './exec-command-end-event.js';
import { interceptApplyPatch } from './intercept-apply-patch.js';
import { orchestrateLaunch } from './orchestrate-launch.js';
import { PausableTimer } from './pausable-timer.js';
import { collectedText, renderShellCommandText, renderStructured } from './render-response.js';
import { resolveArgv } from './resolve-argv.js';
import { shellCommandArguments } from './tool-arguments.js';
import { type CallContext, failed, interrupted, type ToolResponse } from './tool-response.js';

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
  given: CallContext,
): Promise<ToolResponse> {
  // Every result's wall time counts from the call's start: before approvals and the sandbox's set-up.
  const context = { ...given, startedAt: given.startedAt ?? Date.now() };
  const callStart = context.startedAt;
  const parsed = await shellCommandArguments(raw);
  if (!parsed.success) {
    const command = (raw as { command?: unknown } | null)?.command;
    return failed(callStart, {
      code: parsed.error.code,
      message: parsed.error.message,
      ...(typeof command === 'string' ? { command } : {}),
      nextStep: 'Nothing ran: correct the arguments the message names and call shell_command again.',
      error: parsed.error,
    });
  }
  const args = parsed.data;
  // shell_command has no environment_id: it runs where the session's commands run by default.
  const where = resolveEnvironment(door, undefined);
  if (!where.ok)
    return failed(callStart, { code: 'unknown_environment', message: where.message, command: args.command });
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
  if (!argvResult.ok)
    return failed(callStart, {
      code: 'invalid_arguments',
      message: argvResult.message,
      command: args.command,
      nextStep: 'Nothing ran: correct the arguments the message names and call shell_command again.',
    });
  const argv = argvResult.argv;
  const id = door.store.allocate();
  const call = door.callSignal(context.signal);
  const startedAt = Date.now();
  try {
    const launch = await orchestrateLaunch(
      door,
      environment,
      { argv, cwd, tty: false, signal: call.signal },
      context,
      args.command,
    );
    if ('failure' in launch) {
      emitBlockedCommand(
        door.emit,
        { callId: context.callId, processId: id, argv, cwd, source: 'shell_command', startedAt: callStart },
        launch.failure,
      );
      return launch.failure;
    }
    const { outcome } = launch;
    if (outcome.status === 'denied') {
      if (outcome.value.tracker.outputClosed) await outcome.value.settled();
      emitDeniedCommand(
        door.emit,
        {
          callId: context.callId,
          processId: id,
          argv,
          cwd,
          source: 'shell_command',
          startedAt: callStart,
          sandbox: outcome.value.sandboxType,
          ...(outcome.value.level ? { level: outcome.value.level } : {}),
        },
        { exitCode: outcome.denial.exitCode, output: outcome.denial.output },
      );
      return render(
        outcome.denial.exitCode,
        collectedText(outcome.denial.output),
        Date.now() - callStart,
        undefined,
        outcome.value.notices.takeUnreported(),
        true,
        outcome.value.sandboxType,
        outcome.value.level,
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
    const wallTimeMs = Date.now() - callStart;
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
        durationMs: Date.now() - startedAt,
      }),
    );
    if (ended === 'aborted')
      return interrupted(callStart, { command: args.command, shutDown: door.isShutDown() });
    return render(
      exitCode,
      output,
      wallTimeMs,
      timedOut ? timeoutMs : undefined,
      outcome.value.notices.takeUnreported(),
      false,
      outcome.value.sandboxType,
      outcome.value.level,
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
    earlyDenied: boolean,
    sandboxType: string,
    level: SandboxLevel | undefined,
  ): ToolResponse {
    const denial = denialParts(door, {
      output: output.text(),
      exitCode,
      cwd,
      remote: environment.remote,
      since: callStart,
      earlyDenied,
      tool: 'shell_command',
      sandboxType,
    });
    const result = renderStructured({
      chunkId: '',
      wallTimeMs,
      command: args.command,
      exitCode,
      output,
      maxTokens: door.toolOutputTokenLimit,
      ...(level ? { sandbox: level } : {}),
      notices,
      ...denial,
      ...(timedOutAfter === undefined
        ? {}
        : { nextStep: `command timed out after ${timedOutAfter} ms; its process group was killed` }),
    });
    return { text: renderShellCommandText(result), success: true, result };
  }
}
