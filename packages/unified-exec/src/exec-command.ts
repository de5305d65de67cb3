import { beginStreaming } from './begin-streaming.js';
import { collectOutput } from './collect-output.js';
import { commandPreview } from './command-preview.js';
import type { DoorContext, Entry } from './door-context.js';
import { resolveEnvironment, shellFor, workdirIn } from './door-environments.js';
import { execCommandEndEvent } from './exec-command-end-event.js';
import { interceptApplyPatch } from './intercept-apply-patch.js';
import { orchestrateLaunch } from './orchestrate-launch.js';
import { maxOutputTokens, receipt, sessionReceipt } from './receipt.js';
import { collectedText, newChunkId } from './render-response.js';
import { resolveArgv } from './resolve-argv.js';
import { execCommandArguments } from './tool-arguments.js';
import { abortedText, type CallContext, failure, type ToolResponse } from './tool-response.js';
import { execCommandYieldMs } from './yield-time.js';

/**
 * `exec_command` (docs/reference/door.md §2–§7). Never throws: model mistakes and refusals come back
 * as text.
 */
export async function execCommand(
  door: DoorContext,
  raw: unknown,
  context: CallContext,
): Promise<ToolResponse> {
  const parsed = await execCommandArguments(raw, door.plan.execCommandVariant);
  if (!parsed.success) return failure(parsed.error.message, parsed.error);
  const args = parsed.data;
  const where = resolveEnvironment(door, args.environment_id);
  if (!where.ok) return failure(where.message);
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
  if (!argvResult.ok) return failure(argvResult.message);
  const argv = argvResult.argv;
  const id = door.store.allocate();
  const call = door.callSignal(context.signal);
  const maxTokens = maxOutputTokens(door, args.max_output_tokens);
  let entry: Entry | undefined;
  try {
    const launch = await orchestrateLaunch(
      door,
      'exec_command',
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
    );
    if ('failure' in launch) {
      door.store.release(id);
      return launch.failure;
    }
    const { outcome } = launch;

    if (outcome.status === 'denied') {
      // Denied inside the early-exit window and not retried: an ordinary-looking receipt of that run.
      door.store.release(id);
      if (outcome.value.tracker.outputClosed) await outcome.value.settled();
      return receipt({
        chunkId: newChunkId(),
        wallTimeMs: 0,
        exitCode: outcome.denial.exitCode,
        output: collectedText(outcome.denial.output),
        maxTokens,
        notices: outcome.value.notices.takeUnreported(),
        sandboxDenied: true,
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
    const wallTimeMs = Date.now() - startedAt;
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
          durationMs: wallTimeMs,
        }),
      );
      door.store.release(id);
      const finished = receipt({
        chunkId: newChunkId(),
        wallTimeMs,
        exitCode: status?.exitCode ?? -1,
        output,
        maxTokens,
        notices: launched.notices.takeUnreported(),
      });
      // The wait was stopped, but the command had already ended: its result is kept, not lost.
      if (call.signal.aborted)
        return {
          ...finished,
          text: abortedText(startedAt, undefined, door.isShutDown()),
          success: false,
          aborted: true,
        };
      return finished;
    }

    if (collected.aborted) {
      return {
        text: abortedText(startedAt, door.store.get(id) ? id : undefined, door.isShutDown()),
        success: false,
        aborted: true,
      };
    }
    const stored = door.store.get(id);
    if (!stored)
      return failure(`exec_command failed for \`${commandPreview(argv)}\`: Unknown process id ${id}`);
    const status = process.exitStatus();
    if (status && tracker.outputClosed) await launched.settled();
    return sessionReceipt(door, id, status, {
      wallTimeMs,
      output,
      maxTokens,
      notices: launched.notices.takeUnreported(),
    });
  } finally {
    if (entry) entry.activeCalls = (entry.activeCalls ?? 1) - 1;
    call.done();
  }
}
