import { planTools, type ToolPlanInput } from '@ux/features';
import { createOrchestrator, type OrchestratorSettings } from '@ux/orchestrator';
import type { UxEvent } from '@ux/protocol';
import { createSandboxRegistry } from '@ux/protocol-utils';
import { createLocalSpawner } from '@ux/spawn';
import { type ScriptedReviewer, scriptedReviewer, tempDir } from '@ux/test-utils';
import { onTestFinished } from 'vitest';
import { createUnifiedExec, type UnifiedExecOptions } from '../src/create-unified-exec.js';

// The door-independent helpers live in @ux/test-utils; re-exported so a door test imports one module.
export {
  deltaText,
  eventually,
  ofType,
  parseReceipt,
  type Receipt,
  type ScriptedReviewer,
  scriptedReviewer,
  sleep,
} from '@ux/test-utils';

/** One spawner per test file, so the host reaper starts once. */
export const spawner = createLocalSpawner();

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
