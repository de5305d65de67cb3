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
import {
  canonicalize,
  hasInvisibleText,
  nodeFsView,
  type PatchChange,
  readableText,
  visibleText,
} from '@ux/protocol/core';
import type { DoorContext } from './door-context.js';
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
  if (invocation instanceof ApplyPatchError)
    return refused(`apply_patch verification failed: ${invocation.message}`);
  const workdir = invocation.workdir === undefined ? cwd : resolve(cwd, invocation.workdir);
  if (!existsSync(workdir)) return refused(`apply_patch failed: cd ${invocation.workdir}: no such directory`);

  let plan: PatchPlan;
  try {
    plan = await planPatch(invocation.parsed, { cwd: workdir });
  } catch (error) {
    return refused(`apply_patch verification failed: ${(error as Error).message}`);
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
    if (decision.action === 'refuse')
      return {
        ...refused(`apply_patch rejected: ${readableText(decision.reason)}`),
        ...(decision.aborted ? { interruptTurn: true } : {}),
      };

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
      return refused(message);
    }
    door.emit({
      type: 'patch_apply_end',
      call_id: context.callId,
      success: true,
      stdout: text,
      stderr: '',
      changes,
    });
    // docs/reference/door.md §12: no chunk id, no exit code, no session id, no token count, zero wall time.
    return {
      text: `Wall time: 0.0000 seconds\nOutput:\n${text}`,
      success: true,
      result: {
        result_version: 1,
        status: 'exited',
        exit_code: 0,
        wall_time_seconds: 0,
        output: text,
        output_bytes: Buffer.byteLength(text),
        output_lines: text.split('\n').length - 1,
      },
    };
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

function refused(message: string): ToolResponse {
  return { text: message, success: false };
}

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
