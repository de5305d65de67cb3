import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ExecProcess,
  MissingCommandLineError,
  SPAWNER_SPECIFICATION_VERSION,
  type Spawner,
  SpawnFailedError,
  type SpawnRequest,
  StdinClosedError,
} from '@ux/protocol/core';
import { type ConformanceCheck, check, checkEqual, rejection, within } from './conformance-check.js';
import { isAlive, runToEnd, waitForImage, waitForOutput, waitUntilDead } from './process-helpers.js';

export interface SpawnerConformanceOptions {
  /** Also check PTY behaviour (`tty: true`). Default true. */
  tty?: boolean;
  /** A POSIX shell on the host that runs the commands. Default `/bin/sh`. */
  shell?: string;
  /** PATH given to children. Default `/usr/local/bin:/usr/bin:/bin`. */
  path?: string;
  /** How long a check waits for output or an exit before failing. Default 10000 ms. */
  timeoutMs?: number;
}

/**
 * The behaviours every `Spawner` must show, run against real commands. A spawner is conformant when
 * `describeConformance('my spawner', spawnerConformanceChecks(() => createMySpawner()))` passes.
 */
export function spawnerConformanceChecks(
  createSpawner: () => Spawner,
  options: SpawnerConformanceOptions = {},
): ConformanceCheck[] {
  const shell = options.shell ?? '/bin/sh';
  const PATH = options.path ?? '/usr/local/bin:/usr/bin:/bin';
  const wait = options.timeoutMs ?? 10_000;
  const posixOnly = process.platform === 'win32' ? 'needs a POSIX host' : undefined;

  /** Spawns, runs the body, and always kills what is left. */
  async function withProcess(
    request: Partial<SpawnRequest> & { script: string },
    body: (p: ExecProcess) => Promise<void>,
  ) {
    const spawner = createSpawner();
    const { script, ...rest } = request;
    const child = await spawner.spawn({
      argv: [shell, '-c', script],
      cwd: tmpdir(),
      env: { PATH },
      tty: false,
      stdin: 'closed',
      ...rest,
    });
    try {
      await body(child);
    } finally {
      await child.terminate();
    }
  }

  const checks: ConformanceCheck[] = [
    {
      name: 'declares ux-spawner-v1 and an id',
      run: async () => {
        const spawner = createSpawner();
        checkEqual(spawner.specificationVersion, SPAWNER_SPECIFICATION_VERSION, 'specificationVersion');
        check(
          typeof spawner.id === 'string' && /^[a-z][a-z0-9-]*$/.test(spawner.id),
          `id must be lowercase kebab-case, got ${JSON.stringify(spawner.id)}`,
        );
      },
    },
    {
      name: 'runs a command and reports its output and exit code 0',
      run: () =>
        withProcess({ script: 'printf hello' }, async (p) => {
          const { status, text } = await runToEnd(p, wait);
          checkEqual(text, 'hello', 'output');
          checkEqual(status.exitCode, 0, 'exit code');
          checkEqual(p.exitStatus()?.exitCode, 0, 'exitStatus() after exit');
        }),
    },
    {
      name: 'reports a non-zero exit code as a result',
      run: () =>
        withProcess({ script: 'exit 17' }, async (p) => {
          checkEqual((await runToEnd(p, wait)).status.exitCode, 17, 'exit code');
        }),
    },
    {
      name: 'reports a signal death as 128 + the signal number',
      run: () =>
        withProcess({ script: 'kill -KILL $$' }, async (p) => {
          const { status } = await runToEnd(p, wait);
          checkEqual(status.exitCode, 137, 'exit code of a SIGKILLed process');
        }),
    },
    {
      name: 'passes exactly the given environment, nothing inherited',
      run: async () => {
        const marker = 'UX_CONFORMANCE_INHERITED';
        process.env[marker] = 'leaked';
        try {
          await withProcess({ script: 'env', env: { PATH, UX_ONLY: 'given value' } }, async (p) => {
            const { text } = await runToEnd(p, wait);
            check(text.includes('UX_ONLY=given value'), `the given variable is missing from: ${text}`);
            check(!text.includes(marker), `a variable of the host process leaked into the child: ${text}`);
            check(!/^HOME=/m.test(text), `HOME was inherited although it was not given: ${text}`);
          });
        } finally {
          delete process.env[marker];
        }
      },
    },
    {
      name: 'runs in the given working directory',
      run: async () => {
        const dir = realpathSync(mkdtempSync(join(tmpdir(), 'ux-spawner-cwd-')));
        try {
          await withProcess({ script: 'pwd -P', cwd: dir }, async (p) => {
            checkEqual((await runToEnd(p, wait)).text.trim(), dir, 'working directory');
          });
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    },
    {
      name: 'merges stdout and stderr into one stream in arrival order',
      run: () =>
        withProcess({ script: 'printf a; sleep 0.1; printf b >&2; sleep 0.1; printf c' }, async (p) => {
          checkEqual((await runToEnd(p, wait)).text, 'abc', 'merged output');
        }),
    },
    {
      name: 'keeps output produced before the first listener',
      run: () =>
        withProcess({ script: 'printf early' }, async (p) => {
          await within(wait, p.exited, 'exit');
          await new Promise((resolve) => setTimeout(resolve, 100));
          checkEqual((await runToEnd(p, wait)).text, 'early', 'output delivered to a late listener');
        }),
    },
    {
      name: 'passes binary output through byte for byte',
      run: () =>
        withProcess({ script: "printf '\\377\\000\\001\\200\\303'" }, async (p) => {
          checkEqual([...(await runToEnd(p, wait)).output], [255, 0, 1, 128, 195], 'bytes');
        }),
    },
    {
      name: 'delivers all output before closed resolves',
      run: () =>
        withProcess({ script: 'head -c 1000000 /dev/zero' }, async (p) => {
          checkEqual((await runToEnd(p, wait)).output.length, 1_000_000, 'byte count');
        }),
    },
    {
      name: 'writes to the stdin of a pipe process',
      run: () =>
        withProcess({ script: 'head -c 5', stdin: 'pipe' }, async (p) => {
          await p.write('hello');
          const { text, status } = await runToEnd(p, wait);
          checkEqual(text, 'hello', 'echoed stdin');
          checkEqual(status.exitCode, 0, 'exit code');
        }),
    },
    {
      name: 'refuses writes to a process without stdin with StdinClosedError',
      run: () =>
        withProcess({ script: 'sleep 5', stdin: 'closed' }, async (p) => {
          const error = await rejection(p.write('x'), 'writing to a process without stdin');
          check(StdinClosedError.isInstance(error), `expected StdinClosedError, got ${String(error)}`);
        }),
    },
    {
      name: 'exitStatus() is undefined while the process runs',
      run: () =>
        withProcess({ script: 'sleep 5' }, async (p) => {
          checkEqual(p.exitStatus(), undefined, 'exitStatus() of a running process');
        }),
    },
    {
      name: 'interrupt() sends SIGINT to the process group',
      run: () =>
        withProcess({ script: 'echo ready; exec sleep 30' }, async (p) => {
          await waitForOutput(p, 'ready', wait);
          // dash catches SIGINT while it runs `-c`: a signal that lands between the echo and the exec
          // would be held until sleep ends. Interrupt once sleep is in place.
          await waitForImage(p.pid, 'sleep', wait);
          await p.interrupt();
          const status = await within(wait, p.exited, 'exit after interrupt');
          checkEqual(status.exitCode, 130, 'exit code after SIGINT');
        }),
    },
    {
      name: 'terminate() ends the whole process group with SIGTERM, grandchildren included',
      run: () =>
        withProcess({ script: 'sleep 300 & echo "child=$!"; wait' }, async (p) => {
          const seen = await waitForOutput(p, '\n', wait);
          const pid = Number(/child=(\d+)/.exec(seen)?.[1]);
          check(
            Number.isInteger(pid) && isAlive(pid),
            `the grandchild should be running (output ${JSON.stringify(seen)})`,
          );
          await p.terminate();
          const status = await within(wait, p.exited, 'exit after terminate');
          checkEqual(status.exitCode, 143, 'exit code after SIGTERM');
          check(await waitUntilDead(pid), `grandchild ${pid} survived terminate()`);
        }),
    },
    {
      name: 'terminate() sends SIGTERM first, then SIGKILL to what ignores it',
      run: () =>
        withProcess(
          {
            script:
              // `wait` returns at once for a trapped signal (a foreground `sleep` would hold the trap
              // back until it ends, which a busy machine can stretch past the SIGKILL).
              "trap 'echo got-TERM' TERM; (trap '' TERM; exec sleep 300) & echo \"child=$!\"; while :; do sleep 0.05 & wait $!; done",
          },
          async (p) => {
            const seen = await waitForOutput(p, '\n', wait);
            const pid = Number(/child=(\d+)/.exec(seen)?.[1]);
            check(Number.isInteger(pid) && isAlive(pid), `the grandchild should be running (${seen})`);
            // Listen before terminating: a remote terminate() resolves after its round trip, by which
            // time the trap's output may already have arrived.
            const ending = runToEnd(p, wait);
            await p.terminate();
            const { status, text } = await ending;
            check(
              text.includes('got-TERM'),
              `the shell's TERM trap should have run first: ${JSON.stringify(text)}`,
            );
            checkEqual(status.exitCode, 137, 'exit code after the SIGKILL that followed');
            check(await waitUntilDead(pid), `grandchild ${pid} that ignores SIGTERM survived terminate()`);
          },
        ),
    },
    {
      name: 'interrupt() and terminate() are idempotent and safe after exit',
      run: () =>
        withProcess({ script: 'true' }, async (p) => {
          await runToEnd(p, wait);
          await p.interrupt();
          await p.interrupt();
          await p.terminate();
          await p.terminate();
          checkEqual(p.exitStatus()?.exitCode, 0, 'exit code kept after late signals');
        }),
    },
    {
      name: 'rejects an empty argv with MissingCommandLineError',
      run: async () => {
        const error = await rejection(
          createSpawner().spawn({ argv: [], cwd: tmpdir(), env: { PATH }, tty: false, stdin: 'closed' }),
          'spawning an empty argv',
        );
        check(
          MissingCommandLineError.isInstance(error),
          `expected MissingCommandLineError, got ${String(error)}`,
        );
      },
    },
    {
      name: 'rejects a program that does not exist with SpawnFailedError naming it',
      run: async () => {
        const program = '/nonexistent/ux-conformance-program';
        const error = await rejection(
          createSpawner().spawn({
            argv: [program],
            cwd: tmpdir(),
            env: { PATH },
            tty: false,
            stdin: 'closed',
          }),
          'spawning a missing program',
        );
        check(SpawnFailedError.isInstance(error), `expected SpawnFailedError, got ${String(error)}`);
        check(
          String((error as Error).message).includes(program),
          `the error should name ${program}: ${String(error)}`,
        );
      },
    },
    {
      name: 'rejects a working directory that does not exist with SpawnFailedError naming it',
      run: async () => {
        const cwd = join(tmpdir(), 'ux-conformance-missing-dir');
        const error = await rejection(
          createSpawner().spawn({
            argv: [shell, '-c', 'true'],
            cwd,
            env: { PATH },
            tty: false,
            stdin: 'closed',
          }),
          'spawning in a missing cwd',
        );
        check(SpawnFailedError.isInstance(error), `expected SpawnFailedError, got ${String(error)}`);
        check(
          String((error as Error).message).includes(cwd),
          `the error should name ${cwd}: ${String(error)}`,
        );
      },
    },
  ];

  const ttySkip = options.tty === false ? 'the spawner does not offer PTYs' : posixOnly;
  checks.push(
    {
      name: 'a PTY child sees a terminal on stdin and stdout',
      skip: ttySkip,
      run: () =>
        withProcess({ script: '[ -t 0 ] && [ -t 1 ] && echo on-a-tty', tty: true }, async (p) => {
          const { text, status } = await runToEnd(p, wait);
          check(text.includes('on-a-tty'), `expected a terminal, output: ${JSON.stringify(text)}`);
          checkEqual(status.exitCode, 0, 'exit code');
        }),
    },
    {
      name: 'a PTY is 24 rows by 80 columns by default',
      skip: ttySkip,
      run: () =>
        withProcess({ script: 'stty size', tty: true }, async (p) => {
          checkEqual((await runToEnd(p, wait)).text.trim(), '24 80', 'stty size');
        }),
    },
    {
      name: 'writes reach a PTY child, and Ctrl-D ends its input',
      skip: ttySkip,
      run: () =>
        withProcess({ script: 'cat', tty: true }, async (p) => {
          await p.write('ping\n');
          await waitForOutput(p, 'ping', wait);
          await p.write('\u0004');
          const status = await within(wait, p.exited, 'cat to exit on Ctrl-D');
          checkEqual(status.exitCode, 0, 'exit code after EOF');
        }),
    },
    {
      name: 'resize() changes the PTY size the child sees',
      skip: ttySkip,
      run: () =>
        withProcess({ script: 'read line; stty size', tty: true }, async (p) => {
          check(typeof p.resize === 'function', 'a PTY process must offer resize()');
          p.resize?.({ rows: 30, cols: 100 });
          await p.write('go\n');
          await waitForOutput(p, '30 100', wait);
        }),
    },
  );
  return checks;
}
