import { beginStreaming } from './begin-streaming.js';
import { emitBlockedCommand, emitDeniedCommand } from './blocked-command-events.js';
import { collectOutput } from './collect-output.js';
import { denialParts } from './denial-parts.js';
import type { DoorContext, Entry } from './door-context.js';
import { resolveEnvironment, shellFor, workdirIn } from './door-environments.js';
import { execCommandEndEvent } from './exec-command-end-event.js';
import { interceptApplyPatch } from './intercept-apply-patch.js';
import { orchestrateLaunch } from './orchestrate-launch.js';
import { maxOutputTokens, receipt, sessionReceipt } from './receipt.js';
import { collectedText, newChunkId, renderStructured } from './render-response.js';
import { resolveArgv } from './resolve-argv.js';
import { execCommandArguments } from './tool-arguments.js';
import { type CallContext, failed, interrupted, respond, type ToolResponse } from './tool-response.js';
import { execCommandYieldMs } from './yield-time.js';

/**
 * `exec_command` (docs/reference/door.md §2–§7). Never throws: model mistakes, refusals and failures
 * come back as results (status failed or refused).
 */
export async function execCommand(
  door: DoorContext,
  raw: unknown,
  given: CallContext,
): Promise<ToolResponse> {
  // Every result's wall time counts from the call's start: before approvals and the sandbox's set-up.
  const context = { ...given, startedAt: given.startedAt ?? Date.now() };
  const callStart = context.startedAt;
  const parsed = await execCommandArguments(raw, door.plan.execCommandVariant);
  if (!parsed.success) {
    const cmd = (raw as { cmd?: unknown } | null)?.cmd;
    return failed(callStart, {
      code: parsed.error.code,
      message: parsed.error.message,
      ...(typeof cmd === 'string' ? { command: cmd } : {}),
      nextStep: 'Nothing ran: correct the arguments the message names and call exec_command again.',
      error: parsed.error,
    });
  }
  const args = parsed.data;
  const where = resolveEnvironment(door, args.environment_id);
  if (!where.ok)
    return failed(callStart, {
      code: 'unknown_environment',
      message: where.message,
      command: args.cmd,
      nextStep: 'Nothing ran: call again with one of the environment ids the message lists.',
    });
  const environment = where.environment;
  const cwd = workdirIn(environment, args.workdir);
  // A patch for a remote environment is its files' business: it runs there as a command.
  if (!environment.remote) {
    const patched = await interceptApplyPatch(door, args.cmd, cwd, context);
    if (patched) return patched;
  }
  const tty = args.tty ?? false;
  const argvResult = resolveArgv(
    {
      cmd: args.cmd,
      ...(args.shell === undefined ? {} : { shell: args.shell }),
      ...(args.login === undefined ? {} : { login: args.login }),
      ...shellFor(door, environment),
    },
    environment.remote ? 'linux' : process.platform,
  );
  if (!argvResult.ok)
    return failed(callStart, {
      code: 'invalid_arguments',
      message: argvResult.message,
      command: args.cmd,
      nextStep: 'Nothing ran: correct the arguments the message names and call exec_command again.',
    });
  const argv = argvResult.argv;
  const id = door.store.allocate();
  const call = door.callSignal(context.signal);
  const maxTokens = maxOutputTokens(door, args.max_output_tokens);
  let entry: Entry | undefined;
  try {
    const launch = await orchestrateLaunch(
      door,
      environment,
      {
        argv,
        cwd,
        tty,
        sandboxPermissions: args.sandbox_permissions ?? 'use_default',
        ...(args.additional_permissions ? { additionalPermissions: args.additional_permissions } : {}),
        ...(args.justification === undefined ? {} : { justification: args.justification }),
        ...(args.prefix_rule ? { prefixRule: args.prefix_rule } : {}),
        signal: call.signal,
      },
      context,
      args.cmd,
    );
    if ('failure' in launch) {
      door.store.release(id);
      emitBlockedCommand(
        door.emit,
        {
          callId: context.callId,
          processId: id,
          argv,
          cwd,
          source: 'unified_exec_startup',
          startedAt: callStart,
        },
        launch.failure,
      );
      return launch.failure;
    }
    const { outcome } = launch;

    if (outcome.status === 'denied') {
      // Denied inside the early-exit window and not retried: an ordinary-looking receipt of that run.
      door.store.release(id);
      if (outcome.value.tracker.outputClosed) await outcome.value.settled();
      emitDeniedCommand(
        door.emit,
        {
          callId: context.callId,
          processId: id,
          argv,
          cwd,
          source: 'unified_exec_startup',
          startedAt: callStart,
          sandbox: outcome.value.sandboxType,
          ...(outcome.value.level ? { level: outcome.value.level } : {}),
        },
        { exitCode: outcome.denial.exitCode, output: outcome.denial.output },
      );
      return receipt({
        chunkId: newChunkId(),
        wallTimeMs: Date.now() - callStart,
        command: args.cmd,
        exitCode: outcome.denial.exitCode,
        output: collectedText(outcome.denial.output),
        maxTokens,
        ...(outcome.value.level ? { sandbox: outcome.value.level } : {}),
        notices: outcome.value.notices.takeUnreported(),
        ...denialParts(door, {
          output: outcome.denial.output,
          exitCode: outcome.denial.exitCode,
          cwd,
          remote: environment.remote,
          since: callStart,
          earlyDenied: true,
          tool: 'exec_command',
          sandboxType: outcome.value.sandboxType,
        }),
      });
    }

    const launched = outcome.value;
    const { process, tracker } = launched;
    const stream = beginStreaming(door, {
      callId: context.callId,
      processId: id,
      argv,
      cwd,
      source: 'unified_exec_startup',
      launched,
    });
    const startedAt = Date.now();
    const aliveAtStart = process.exitStatus() === undefined;
    entry = {
      id,
      callId: context.callId,
      command: argv,
      cwd,
      environment: environment.id,
      tty,
      launched,
      stream,
      startedAt,
      lastUsed: startedAt,
      tool: 'exec_command',
      remote: environment.remote,
      hasExited: () => process.exitStatus() !== undefined,
      // This call waits on it: pruning must not take it away before the call has answered.
      activeCalls: 1,
    };
    // Stored before the wait, so an interrupt of this call cannot lose the process. One that started
    // while the session was shutting down is ended at once: nothing would end it later.
    if (aliveAtStart) {
      if (door.isShutDown()) void process.terminate();
      else {
        const victim = door.store.store(entry);
        if (victim) void victim.launched.process.terminate();
      }
      door.watchExit(entry);
    }

    // A process that already ended is read to its end (at most 50 ms after its exit), interrupted or
    // not: stopping the wait must not lose the output of a command that is over.
    const collected = await collectOutput(
      process,
      tracker,
      startedAt + execCommandYieldMs(args.yield_time_ms),
      door.pause,
      aliveAtStart ? call.signal : undefined,
    );
    const wallTimeMs = Date.now() - callStart;
    const output = collected.output;

    if (!aliveAtStart) {
      const status = process.exitStatus();
      await stream.drained;
      if (tracker.outputClosed) await launched.settled();
      door.emit(
        execCommandEndEvent({
          callId: context.callId,
          processId: id,
          command: argv,
          cwd,
          source: 'unified_exec_startup',
          exitCode: status?.exitCode,
          stream,
          collected: output.text(),
          durationMs: Date.now() - startedAt,
        }),
      );
      door.store.release(id);
      const exitCode = status?.exitCode ?? -1;
      // The wait was stopped, but the command had already ended: its result is kept, not lost.
      const stopped = call.signal.aborted;
      if (stopped && door.isShutDown()) return interrupted(callStart, { shutDown: true, command: args.cmd });
      const finished = renderStructured({
        chunkId: newChunkId(),
        wallTimeMs,
        command: args.cmd,
        exitCode,
        output,
        maxTokens,
        ...(launched.level ? { sandbox: launched.level } : {}),
        notices: launched.notices.takeUnreported(),
        ...denialParts(door, {
          output: output.text(),
          exitCode,
          cwd,
          remote: environment.remote,
          since: callStart,
          earlyDenied: false,
          tool: 'exec_command',
          sandboxType: launched.sandboxType,
        }),
        ...(stopped ? { interrupted: true } : {}),
      });
      return respond(finished, stopped ? { success: false, aborted: true } : { success: true });
    }

    if (collected.aborted)
      return interrupted(callStart, {
        command: args.cmd,
        shutDown: door.isShutDown(),
        ...(door.store.get(id) ? { sessionId: id } : {}),
        // An abort at a per-exec question ended the command (intercept-execs): no session to poll.
        ...(launch.interception?.aborted ? { endedAtQuestion: true } : {}),
      });
    const stored = door.store.get(id);
    if (!stored)
      return failed(callStart, {
        code: 'unknown_session',
        message: `exec_command failed: Unknown process id ${id}`,
        command: args.cmd,
      });
    const status = process.exitStatus();
    if (status && tracker.outputClosed) await launched.settled();
    return sessionReceipt(door, stored, status, {
      wallTimeMs,
      command: args.cmd,
      output,
      maxTokens,
      ...(launched.level ? { sandbox: launched.level } : {}),
      notices: launched.notices.takeUnreported(),
      since: callStart,
      ...(collected.waitingForInput ? { waitingForInput: true } : {}),
    });
  } finally {
    if (entry) entry.activeCalls = (entry.activeCalls ?? 1) - 1;
    call.done();
  }
}
