import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { EffectivePolicy, Spawner } from '@ux/protocol/core';
import {
  type LaunchPlan,
  MissingCommandLineError,
  SANDBOX_CAPABILITIES,
  SANDBOX_SPECIFICATION_VERSION,
  type SandboxBackend,
  type SandboxCapability,
  type SandboxPlanRequest,
  type SandboxProbe,
  UxError,
} from '@ux/protocol/core';
import {
  type ConformanceCheck,
  ConformanceSkip,
  check,
  checkEqual,
  rejection,
  within,
} from './conformance-check.js';
import { sandboxCapabilityChecks } from './sandbox-capability-checks.js';
import { sandboxSignalChecks } from './sandbox-signal-checks.js';
import { startPlan } from './start-plan.js';

export interface SandboxBackendConformanceOptions {
  /**
   * Run plans for real: `true` demands it (the checks fail if the backend is unavailable here),
   * `false` checks only the planner, `'auto'` (default) runs them when this platform is one of the
   * backend's and its probe says available, and reports them as skipped with the probe's reason otherwise.
   */
  run?: boolean | 'auto';
  /** A POSIX shell inside the sandbox. Default `/bin/sh`. */
  shell?: string;
  /**
   * A spawner that can start PTYs (`createLocalSpawner()` of `@ux/spawn`): with it the signal checks
   * also run on a terminal and through `interrupt()` / `terminate()`. Without it they run on pipes only.
   */
  spawner?: Spawner;
  /**
   * The working directory (a writable root) the planner checks plan in. Default `/tmp`. A backend
   * that refuses a writable root holding ux's runtime root (Landlock cannot hide `/tmp/ux-<uid>` inside
   * a writable `/tmp`) passes another existing directory.
   */
  planCwd?: string;
  /**
   * What the backend must declare in its probe's `enforces` here. The capability checks follow the
   * declaration (one not declared is skipped), so a declaration that loses a capability would skip its
   * checks quietly; with this list a check fails instead.
   */
  expectEnforces?: readonly SandboxCapability[];
}

const ENFORCEMENTS = ['enforced', 'advisory', 'none'];
const ID_PATTERN = /^[a-z][a-z0-9-]*$/;

/** Policies the checks plan under; `cwd` is the workspace. */
function workspaceWrite(network: 'restricted' | 'enabled' = 'restricted'): EffectivePolicy {
  return {
    fileSystem: {
      kind: 'restricted',
      entries: [
        { path: { type: 'special', value: 'root' }, access: 'read' },
        { path: { type: 'special', value: 'cwd' }, access: 'write' },
      ],
    },
    network,
  };
}
const READ_ONLY: EffectivePolicy = {
  fileSystem: { kind: 'restricted', entries: [{ path: { type: 'special', value: 'root' }, access: 'read' }] },
  network: 'restricted',
};

/**
 * The behaviours every `SandboxBackend` must show. Planner checks run everywhere; runtime checks start
 * the planned commands with `child_process` and verify from the host side that the sandbox held.
 */
export function sandboxBackendConformanceChecks(
  createBackend: () => SandboxBackend,
  options: SandboxBackendConformanceOptions = {},
): ConformanceCheck[] {
  const shell = options.shell ?? '/bin/sh';
  const PATH = '/usr/local/bin:/usr/bin:/bin';
  const planCwd = options.planCwd ?? (process.platform === 'win32' ? 'C:\\ux-conformance' : '/tmp');
  const request = (overrides: Partial<SandboxPlanRequest> = {}): SandboxPlanRequest => ({
    argv: [shell, '-c', 'echo conformance'],
    cwd: planCwd,
    env: { PATH, UX_CONFORMANCE: '1' },
    policy: workspaceWrite(),
    tty: false,
    ...overrides,
  });

  const planner: ConformanceCheck[] = [
    {
      name: 'declares ux-sandbox-v1, an id and its platforms',
      run: async () => {
        const backend = createBackend();
        checkEqual(backend.specificationVersion, SANDBOX_SPECIFICATION_VERSION, 'specificationVersion');
        check(
          typeof backend.id === 'string' && ID_PATTERN.test(backend.id),
          `id must be lowercase kebab-case, got ${JSON.stringify(backend.id)}`,
        );
        check(
          Array.isArray(backend.platforms) && backend.platforms.length > 0,
          'platforms must list at least one platform',
        );
      },
    },
    {
      name: 'probe() resolves with availability, or a reason and a fix',
      run: async () => {
        const probe = await within(10_000, createBackend().probe(), 'probe()');
        check(
          typeof probe.available === 'boolean',
          `probe().available must be a boolean, got ${JSON.stringify(probe)}`,
        );
        if (!probe.available) {
          check(
            typeof probe.reason === 'string' && probe.reason.trim() !== '',
            'an unavailable probe must say why (reason)',
          );
          check(
            typeof probe.fix === 'string' && probe.fix.trim() !== '',
            'an unavailable probe must say how to fix it (fix)',
          );
        }
      },
    },
    {
      name: 'probe() declares in enforces only known capabilities, each once',
      run: async () => {
        const probe = await within(10_000, createBackend().probe(), 'probe()');
        if (!probe.available || probe.enforces === undefined) return;
        check(
          Array.isArray(probe.enforces),
          `probe().enforces must be an array, got ${JSON.stringify(probe.enforces)}`,
        );
        for (const capability of probe.enforces)
          check(
            (SANDBOX_CAPABILITIES as readonly string[]).includes(capability),
            `probe().enforces names an unknown capability ${JSON.stringify(capability)} (known: ${SANDBOX_CAPABILITIES.join(', ')})`,
          );
        checkEqual(
          new Set(probe.enforces).size,
          probe.enforces.length,
          'distinct capabilities in probe().enforces',
        );
      },
    },
    {
      name: 'plans a command into a well-formed launch plan',
      run: async () => {
        const backend = createBackend();
        const plan = await backend.plan(request());
        checkPlanShape(plan, backend.id);
      },
    },
    {
      name: 'keeps every variable of the computed environment (adds, never drops or changes)',
      run: async () => {
        const plan = await createBackend().plan(
          request({ env: { PATH, UX_CONFORMANCE: 'kept', EMPTY: '' } }),
        );
        checkEqual(plan.env.UX_CONFORMANCE, 'kept', 'UX_CONFORMANCE in the plan env');
        checkEqual(plan.env.EMPTY, '', 'EMPTY in the plan env');
        checkEqual(plan.env.PATH, PATH, 'PATH in the plan env');
      },
    },
    {
      name: 'does not modify the request it is given',
      run: async () => {
        const original = request();
        const frozen = deepFreeze(structuredClone(original));
        await createBackend().plan(frozen);
        checkEqual(frozen, original, 'the request after planning');
      },
    },
    {
      name: 'plans the same request the same way twice',
      run: async () => {
        const backend = createBackend();
        const first = await backend.plan(request());
        const second = await backend.plan(request());
        checkEqual(
          { argv: second.argv, cwd: second.cwd, env: second.env },
          { argv: first.argv, cwd: first.cwd, env: first.env },
          'the second plan',
        );
        await first.cleanup?.();
        await second.cleanup?.();
      },
    },
    {
      name: 'plans read-only and network-enabled policies',
      run: async () => {
        const backend = createBackend();
        checkPlanShape(await backend.plan(request({ policy: READ_ONLY })), backend.id);
        checkPlanShape(await backend.plan(request({ policy: workspaceWrite('enabled') })), backend.id);
      },
    },
    {
      name: 'rejects an empty argv with MissingCommandLineError',
      run: async () => {
        const error = await rejection(createBackend().plan(request({ argv: [] })), 'planning an empty argv');
        check(
          MissingCommandLineError.isInstance(error),
          `expected MissingCommandLineError, got ${String(error)}`,
        );
      },
    },
    {
      name: 'rejects a relative working directory with an invalid-arguments error',
      run: async () => {
        const error = await rejection(
          createBackend().plan(request({ cwd: 'relative/dir' })),
          'planning with a relative cwd',
        );
        check(
          UxError.isInstance(error) && error.code === 'invalid_arguments',
          `expected an invalid_arguments UxError, got ${String(error)}`,
        );
      },
    },
    {
      name: 'classifyDenial(), when offered, answers for any evidence and never calls exit 0 a denial',
      run: async () => {
        const backend = createBackend();
        if (!backend.classifyDenial) return;
        for (const evidence of [
          { exitCode: 0, output: 'Permission denied' },
          { exitCode: 1, output: 'touch: cannot touch x: Read-only file system' },
          { exitCode: 159, output: '', signal: 'SIGSYS' },
          { exitCode: 2, output: '' },
        ]) {
          const verdict = backend.classifyDenial(evidence);
          check(
            ['denied', 'not_denied', 'unknown'].includes(verdict),
            `verdict for ${JSON.stringify(evidence)} was ${verdict}`,
          );
          if (evidence.exitCode === 0) check(verdict !== 'denied', 'exit 0 must never be a denial');
        }
      },
    },
  ];

  return [...planner, ...runtimeChecks(createBackend, options, shell, PATH)];
}

function runtimeChecks(
  createBackend: () => SandboxBackend,
  options: SandboxBackendConformanceOptions,
  shell: string,
  PATH: string,
): ConformanceCheck[] {
  const mode = options.run ?? 'auto';
  let probed: Promise<SandboxProbe | string> | undefined;
  /** The probe here, or why the backend cannot run on this platform. */
  const probeHere = () => {
    probed ??= (async () => {
      const backend = createBackend();
      if (!backend.platforms.includes(process.platform)) return `not a ${backend.platforms.join('/')} host`;
      return backend.probe();
    })();
    return probed;
  };
  /** Why runtime checks cannot run here, or undefined when they can. */
  const unavailable = async () => {
    const probe = await probeHere();
    if (typeof probe === 'string') return probe;
    return probe.available ? undefined : `${probe.reason} (${probe.fix})`;
  };
  /** What the probe declares the backend enforces here. */
  const declaration = async () => {
    const probe = await probeHere();
    return typeof probe === 'object' && probe.available ? (probe.enforces ?? []) : undefined;
  };

  /** Makes a workspace and an outside directory, runs the body, removes both. */
  async function withWorkspace(body: (dirs: { workspace: string; outside: string }) => Promise<void>) {
    const reason = await unavailable();
    if (reason) throw new Error(`the backend cannot run here: ${reason}`);
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'ux-sandbox-conformance-')));
    const workspace = join(root, 'workspace');
    const outside = join(root, 'outside');
    mkdirSync(workspace);
    mkdirSync(outside);
    try {
      await body({ workspace, outside });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }

  async function runPlanned(policy: EffectivePolicy, cwd: string, script: string) {
    const backend = createBackend();
    const plan = await backend.plan({ argv: [shell, '-c', script], cwd, env: { PATH }, policy, tty: false });
    try {
      return await runPlan(plan);
    } finally {
      await plan.cleanup?.();
    }
  }

  async function withPlan(script: string, tty: boolean, body: (plan: LaunchPlan) => Promise<void>) {
    if (process.platform === 'win32')
      throw new ConformanceSkip('process groups and POSIX signals do not exist on Windows');
    await withWorkspace(async ({ workspace }) => {
      const plan = await createBackend().plan({
        argv: [shell, '-c', script],
        cwd: workspace,
        env: { PATH },
        policy: workspaceWrite(),
        tty,
      });
      try {
        await body(plan);
      } finally {
        await plan.cleanup?.();
      }
    });
  }

  const items: Omit<ConformanceCheck, 'skip'>[] = [];
  if (options.expectEnforces)
    items.push({
      name: 'probe() declares in enforces at least what the test expects',
      run: async () => {
        const reason = await unavailable();
        if (reason) throw new Error(`the backend cannot run here: ${reason}`);
        const declared = (await declaration()) ?? [];
        const missing = options.expectEnforces!.filter((capability) => !declared.includes(capability));
        check(
          missing.length === 0,
          `probe().enforces lacks ${missing.join(', ')} (it declares ${declared.join(', ') || 'nothing'})`,
        );
      },
    });
  items.push(
    {
      name: 'runs a planned command and passes its output through',
      run: () =>
        withWorkspace(async ({ workspace }) => {
          const result = await runPlanned(workspaceWrite(), workspace, 'echo sandboxed-ok');
          checkEqual(result.exitCode, 0, `exit code (output ${JSON.stringify(result.output)})`);
          check(result.output.includes('sandboxed-ok'), `output was ${JSON.stringify(result.output)}`);
        }),
    },
    {
      name: 'allows writes inside the working directory under workspace-write',
      run: () =>
        withWorkspace(async ({ workspace }) => {
          const result = await runPlanned(workspaceWrite(), workspace, 'echo inside > inside.txt');
          checkEqual(result.exitCode, 0, `exit code (output ${JSON.stringify(result.output)})`);
          checkEqual(readFileSync(join(workspace, 'inside.txt'), 'utf8'), 'inside\n', 'file written inside');
        }),
    },
  );

  for (const item of sandboxCapabilityChecks({
    shell,
    PATH,
    createBackend,
    withWorkspace,
    workspaceWrite,
    readOnly: READ_ONLY,
  })) {
    const { capability } = item;
    items.push({
      name: item.name,
      run: async () => {
        if (capability) {
          const reason = await unavailable();
          if (reason) throw new Error(`the backend cannot run here: ${reason}`);
          // Checked only where declared: a capability the probe does not declare is never relied on.
          const declared = await declaration();
          if (!declared?.includes(capability))
            throw new ConformanceSkip(`the probe does not declare ${capability} in enforces`);
        }
        await item.run();
      },
    });
  }
  items.push(...sandboxSignalChecks(withPlan, options.spawner));

  return items.map((item) => ({
    ...item,
    skip: mode === false ? 'runtime checks turned off' : undefined,
    run: async () => {
      if (mode === 'auto') {
        const reason = await unavailable();
        // 'auto' on a host that cannot run the backend: reported as skipped with the probe's reason.
        if (reason) throw new ConformanceSkip(reason);
      }
      await item.run();
    },
  }));
}

function checkPlanShape(plan: LaunchPlan, id: string): void {
  check(Array.isArray(plan.argv) && plan.argv.length > 0, 'plan.argv must be a non-empty array');
  check(
    plan.argv.every((part) => typeof part === 'string'),
    'plan.argv must hold only strings',
  );
  check(
    typeof plan.cwd === 'string' && (isAbsolute(plan.cwd) || /^[A-Za-z]:\\/.test(plan.cwd)),
    `plan.cwd must be absolute, got ${plan.cwd}`,
  );
  check(
    typeof plan.env === 'object' &&
      plan.env !== null &&
      Object.values(plan.env).every((v) => typeof v === 'string'),
    'plan.env must map names to strings',
  );
  check(
    plan.sandboxType === id,
    `plan.sandboxType must be the backend id "${id}", got ${JSON.stringify(plan.sandboxType)}`,
  );
  check(
    ENFORCEMENTS.includes(plan.enforcement?.fileSystem) && ENFORCEMENTS.includes(plan.enforcement?.network),
    `plan.enforcement must say enforced/advisory/none for fileSystem and network, got ${JSON.stringify(plan.enforcement)}`,
  );
  check(Array.isArray(plan.enforcement.notes), 'plan.enforcement.notes must be an array');
  check(
    plan.cleanup === undefined || typeof plan.cleanup === 'function',
    'plan.cleanup must be a function when present',
  );
}

/** Runs a plan with plain child_process and returns its merged output and exit code. */
function runPlan(plan: LaunchPlan): Promise<{ exitCode: number; output: string }> {
  return startPlan(plan, 15_000).done;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
