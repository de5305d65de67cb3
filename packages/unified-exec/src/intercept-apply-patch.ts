import { existsSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import {
  ApplyPatchError,
  applyPlan,
  formatPatchSummary,
  noFollowFileSystem,
  type PatchPlan,
  parseApplyPatchInvocation,
  planPatch,
  touchedPaths,
} from '@ux/apply-patch';
import { type PatchChange, RejectedError } from '@ux/protocol/core';
import { canonicalize, hasInvisibleText, nodeFsView, readableText, visibleText } from '@ux/protocol-utils';
import type { DoorContext } from './door-context.js';
import { receipt } from './receipt.js';
import { decidedBy, refusedResponse } from './refusal-response.js';
import { collectedText, newChunkId } from './render-response.js';
import type { CallContext, ToolResponse } from './tool-response.js';

/**
 * An `exec_command` / `shell_command` whose command is an `apply_patch` invocation never spawns
 * (docs/reference/door.md §12): the door parses the patch, resolves every hunk against the files, asks the
 * orchestrator whether every touched path may be written (protected and hidden paths are refused,
 * paths outside the writable roots are asked about), then writes all files or none, emitting
 * `patch_apply_begin` / `patch_apply_end`. Returns undefined for any other command.
 */
export async function interceptApplyPatch(
  door: DoorContext,
  cmd: string,
  cwd: string,
  context: CallContext,
): Promise<ToolResponse | undefined> {
  const invocation = parseApplyPatchInvocation(cmd);
  if (invocation === undefined) return undefined;
  const callStart = context.startedAt ?? Date.now();
  // The patch's answer is a receipt like any command's: exit code 0 when every file was written, 1
  // when none was (the message says why), with the command as the call gave it.
  const finished = (exitCode: 0 | 1, text: string, extra: Partial<ToolResponse> = {}): ToolResponse => ({
    ...receipt({
      chunkId: newChunkId(),
      wallTimeMs: Date.now() - callStart,
      command: cmd,
      exitCode,
      output: collectedText(text),
      maxTokens: door.toolOutputTokenLimit,
      ...(exitCode === 1 ? { nextStep: PATCH_FAILED_NEXT_STEP } : {}),
    }),
    ...(exitCode === 1 ? { success: false } : {}),
    ...extra,
  });
  if (ApplyPatchError.isInstance(invocation))
    return finished(1, `apply_patch verification failed: ${invocation.message}`);
  const workdir = invocation.workdir === undefined ? cwd : resolve(cwd, invocation.workdir);
  if (!existsSync(workdir))
    return finished(1, `apply_patch failed: cd ${invocation.workdir}: no such directory`);

  let plan: PatchPlan;
  try {
    plan = await planPatch(invocation.parsed, { cwd: workdir });
  } catch (error) {
    return finished(1, `apply_patch verification failed: ${(error as Error).message}`);
  }
  // Decided and written as the kernel sees them (links resolved): the writer then reaches exactly the
  // paths the orchestrator allowed, through descriptors that follow no link, so a directory a
  // sandboxed command swaps for a link meanwhile makes the write fail instead of landing elsewhere.
  plan = canonicalPlan(plan);
  const changes = patchChanges(plan);
  const call = door.callSignal(context.signal);
  try {
    const decision = await door.orchestrator.decidePatch({
      callId: context.callId,
      ...(context.turnId ? { turnId: context.turnId } : {}),
      cwd: workdir,
      projectRoot: door.cwd,
      paths: touchedPaths(plan),
      summary: summaryLines(plan),
      signal: call.signal,
    });
    if (decision.action === 'refuse') {
      const reason = `apply_patch rejected: ${readableText(decision.reason)}`;
      // Asked and refused: whoever answered decided; refused without asking: the policy did.
      const asked = RejectedError.isInstance(decision.cause) ? decision.cause : undefined;
      return refusedResponse(
        callStart,
        {
          command: cmd,
          decidedBy: decision.aborted ? 'person' : asked ? decidedBy(asked) : 'policy',
          reason,
          ...(decision.aborted
            ? { nextStep: 'The person stopped the turn: wait for their instructions.' }
            : asked
              ? {}
              : {
                  nextStep:
                    'The policy does not let a patch write there: change only files inside the writable roots, and none that is protected.',
                }),
        },
        decision.aborted ? { interruptTurn: true } : {},
      );
    }

    door.emit({
      type: 'patch_apply_begin',
      call_id: context.callId,
      auto_approved: decision.autoApproved,
      changes,
    });
    let text: string;
    try {
      const fs = noFollowFileSystem();
      // A file name is the patch's (the model's) choice: a control character in it is shown, not run.
      text = formatPatchSummary(await applyPlan(plan, fs ? { fs } : {}), { quote: readableText });
    } catch (error) {
      const reason = (error as Error).message;
      // The applier's own errors already say that nothing changed.
      const message = `apply_patch failed: ${reason}${reason.includes('no file was changed') ? '' : '; no file was changed'}`;
      door.emit({
        type: 'patch_apply_end',
        call_id: context.callId,
        success: false,
        stdout: '',
        stderr: message,
        changes,
      });
      return finished(1, message);
    }
    door.emit({
      type: 'patch_apply_end',
      call_id: context.callId,
      success: true,
      stdout: text,
      stderr: '',
      changes,
    });
    // docs/reference/door.md §12: a receipt like any command's, exit code 0.
    return finished(0, text);
  } finally {
    call.done();
  }
}

/**
 * The plan with every path it writes, removes or takes a mode from made canonical, each path ONCE: the
 * paths the orchestrator decides on (`changes`) and the ones the applier writes (`writes`, `removals`)
 * must be the same strings, or a link swapped in between two resolutions would let the applier write
 * where nobody decided.
 */
function canonicalPlan(plan: PatchPlan): PatchPlan {
  const fsView = nodeFsView();
  const resolved = new Map<string, string>();
  const real = (path: string) => {
    let canonical = resolved.get(path);
    if (canonical === undefined) {
      canonical = canonicalize(path, fsView);
      resolved.set(path, canonical);
    }
    return canonical;
  };
  return {
    ...plan,
    cwd: real(plan.cwd),
    changes: plan.changes.map((change) => ({
      ...change,
      path: real(change.path),
      ...(change.movedTo === undefined ? {} : { movedTo: real(change.movedTo) }),
    })),
    writes: plan.writes.map((write) => ({
      ...write,
      path: real(write.path),
      ...(write.modeFrom === undefined ? {} : { modeFrom: real(write.modeFrom) }),
    })),
    removals: plan.removals.map(real),
  };
}

const PATCH_FAILED_NEXT_STEP =
  'No file was changed: read the files again, correct the patch (its context lines must match them exactly) and send it again.';

function patchChanges(plan: PatchPlan): PatchChange[] {
  return plan.changes.map((change) => ({
    path: change.path,
    kind: change.kind,
    ...(change.movedTo === undefined ? {} : { move_path: change.movedTo }),
    added: change.added,
    removed: change.removed,
  }));
}

/**
 * `A new.txt`, `M src/x.ts → src/y.ts`, `D old.txt`: what the person asked is shown, one line per
 * file. When a name holds a newline, a terminal escape or another invisible character, every line is
 * shown through `visibleText` (backslashes doubled throughout, so the lines read alike; the prompt
 * says so, from the raw paths of the request).
 */
function summaryLines(plan: PatchPlan): string {
  const letter = { add: 'A', update: 'M', delete: 'D' } as const;
  const lines = plan.changes.map((change) => {
    const path = relative(plan.cwd, change.path) || change.path;
    const moved = change.movedTo === undefined ? '' : ` → ${relative(plan.cwd, change.movedTo)}`;
    return `${letter[change.kind]} ${path}${moved} (+${change.added} −${change.removed})`;
  });
  const escaped = lines.some(hasInvisibleText);
  return lines.map((line) => (escaped ? visibleText(line) : line)).join('\n');
}
