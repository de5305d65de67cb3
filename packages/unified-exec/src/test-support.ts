import { planTools, type ToolPlanInput } from '@ux/features';
import { createOrchestrator, type OrchestratorSettings } from '@ux/orchestrator';
import {
  type ApprovalRequest,
  REVIEWER_SPECIFICATION_VERSION,
  type ReviewDecision,
  type Reviewer,
  type UxEvent,
} from '@ux/protocol';
import { createSandboxRegistry } from '@ux/protocol-utils';
import { createLocalSpawner } from '@ux/spawn';
import { tempDir } from '@ux/test-utils';
import { onTestFinished } from 'vitest';
import { createUnifiedExec, type UnifiedExecOptions } from './create-unified-exec.js';

/** Used by tests only: one spawner per test file, so the host reaper starts once. */
export const spawner = createLocalSpawner();

export interface ScriptedReviewer extends Reviewer {
  requests: ApprovalRequest[];
}

/** Answers from a script (the last answer repeats) and records every request. */
export function scriptedReviewer(...answers: ReviewDecision[]): ScriptedReviewer {
  const reviewer: ScriptedReviewer = {
    specificationVersion: REVIEWER_SPECIFICATION_VERSION,
    id: 'scripted',
    requests: [],
    async review(request, { signal }) {
      reviewer.requests.push(structuredClone(request));
      if (signal.aborted) return { type: 'abort' };
      return answers[Math.min(reviewer.requests.length - 1, answers.length - 1)] ?? { type: 'denied' };
    },
  };
  return reviewer;
}

export interface DoorOptions {
  orchestrator?: Partial<OrchestratorSettings>;
  flags?: Partial<ToolPlanInput['flags']>;
  door?: Partial<UnifiedExecOptions>;
}

/** A door in a fresh temp dir, with deterministic ids, recording its events; shut down after the test. */
export function makeDoor(options: DoorOptions = {}) {
  const cwd = options.door?.cwd ?? tempDir('ux-door-');
  const reviewer =
    (options.orchestrator?.reviewer as ScriptedReviewer | undefined) ??
    scriptedReviewer({ type: 'approved' });
  const orchestrator = createOrchestrator({
    sandboxRegistry: createSandboxRegistry({}),
    approvalPolicy: 'never',
    policy: { type: 'danger-full-access' },
    ...options.orchestrator,
    reviewer,
  });
  const toolPlan = planTools({
    flags: {
      shell_tool: true,
      unified_exec: true,
      shell_zsh_fork: false,
      unified_exec_zsh_fork: false,
      ...options.flags,
    },
    platform: 'linux',
  });
  const door = createUnifiedExec({
    orchestrator,
    spawner,
    toolPlan,
    cwd,
    userShell: '/bin/bash',
    deterministicIds: true,
    // A home of its own: login shells must not read this machine's start-up files (a slow or broken
    // ~/.bashrc would decide the tests' timing).
    baseEnvironment: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tempDir('ux-door-home-') },
    ...options.door,
  });
  const events: UxEvent[] = [];
  door.onEvent((event) => events.push(event));
  onTestFinished(() => door.shutdown());
  return { door, events, cwd, reviewer };
}

export interface Receipt {
  chunkId?: string;
  wallTime: number;
  exitCode?: number;
  sessionId?: number;
  /** The `Process is waiting for input` line. */
  waitingForInput?: true;
  /** The `Sandbox level:` line (a sandboxed command's start). */
  level?: string;
  /** The `Sandbox:` lines. */
  sandbox?: string[];
  /** The `Sandbox denied:` line. */
  denied?: string;
  /** The `Next step:` line. */
  nextStep?: string;
  originalTokenCount?: number;
  output: string;
}

/** Reads the receipt text (docs/reference/door.md §7) back into fields, strictly: any other shape fails. */
export function parseReceipt(text: string): Receipt {
  const match =
    /^(?:Chunk ID: ([0-9a-f]{6})\n)?Wall time: (\d+\.\d{4}) seconds\n(?:Process exited with code (-?\d+)\n)?(?:Process running with session ID (\d+)\n)?(Process is waiting for input\n)?(?:Sandbox level: (.*)\n)?((?:Sandbox: .*\n)*)(?:Sandbox denied: (.*)\n)?(?:Next step: (.*)\n)?(?:Original token count: (\d+)\n)?Output:\n([\s\S]*)$/.exec(
      text,
    );
  if (!match) throw new Error(`not a receipt:\n${text}`);
  return {
    ...(match[1] ? { chunkId: match[1] } : {}),
    wallTime: Number(match[2]),
    ...(match[3] ? { exitCode: Number(match[3]) } : {}),
    ...(match[4] ? { sessionId: Number(match[4]) } : {}),
    ...(match[5] ? { waitingForInput: true } : {}),
    ...(match[6] ? { level: match[6] } : {}),
    ...(match[7]
      ? {
          sandbox: match[7]
            .trimEnd()
            .split('\n')
            .map((line) => line.slice('Sandbox: '.length)),
        }
      : {}),
    ...(match[8] ? { denied: match[8] } : {}),
    ...(match[9] ? { nextStep: match[9] } : {}),
    ...(match[10] ? { originalTokenCount: Number(match[10]) } : {}),
    output: match[11]!,
  };
}

export function ofType<T extends UxEvent['type']>(
  events: UxEvent[],
  type: T,
): Extract<UxEvent, { type: T }>[] {
  return events.filter((event): event is Extract<UxEvent, { type: T }> => event.type === type);
}

export function deltaText(events: UxEvent[], callId?: string): string {
  return Buffer.concat(
    ofType(events, 'exec_command_output_delta')
      .filter((event) => callId === undefined || event.call_id === callId)
      .map((event) => Buffer.from(event.chunk)),
  ).toString('utf8');
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `check` holds (or the time runs out: generous, since machines are noisy). */
export async function eventually(check: () => boolean, timeoutMs = 15_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await sleep(20);
  }
  return check();
}
