import type { ExecProcess, SpawnRequest } from '@ux/protocol';
import { waitForOutput } from '@ux/protocol-testing';
import { useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createLocalSpawner } from './local-spawner.js';

// "Waiting for input" read from the real /proc of real processes on a PTY and on pipes (Linux only:
// elsewhere the method is absent, which the last test checks).
const spawner = createLocalSpawner();
const PATH = '/usr/local/bin:/usr/bin:/bin';
const linux = process.platform === 'linux';

beforeAll(async () => {
  await warmUpSpawner(spawner);
});
useLeakCheck();

async function start(request: Partial<SpawnRequest> & { argv: string[] }) {
  const child = await spawner.spawn({ cwd: '/', env: { PATH }, tty: false, stdin: 'closed', ...request });
  onTestFinished(async () => {
    await child.terminate();
    await child.closed;
  });
  return child;
}

/** Asks until the answer is `want` (true once the program reached its read), or fails after 10 s. */
async function becomes(child: ExecProcess, want: boolean): Promise<boolean | undefined> {
  const deadline = Date.now() + 10_000;
  let last: boolean | undefined;
  while (Date.now() < deadline) {
    last = child.waitingForInput?.();
    if (last === want) return last;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return last;
}

/** The answer, asked several times while the program surely sits where it is (after its marker). */
async function steadily(child: ExecProcess): Promise<(boolean | undefined)[]> {
  const answers: (boolean | undefined)[] = [];
  for (let i = 0; i < 5; i++) {
    answers.push(child.waitingForInput?.());
    await new Promise((resolve) => setTimeout(resolve, 60));
  }
  return answers;
}

describe.runIf(linux)('waitingForInput on Linux', () => {
  it('a python3 -q REPL on a terminal waits for input; once it runs a line that sleeps it does not', async () => {
    const child = await start({ argv: ['python3', '-q'], tty: true });
    await waitForOutput(child, '>>> ');
    expect(await becomes(child, true)).toBe(true);
    const answer = waitForOutput(child, '42');
    await child.write('import time; print(6*7); time.sleep(100)\n');
    await answer;
    // Sleeping inside the REPL: not waiting for input.
    expect(await steadily(child)).toEqual([false, false, false, false, false]);
  });

  it('sleep 100 on a terminal is running, not waiting', async () => {
    const child = await start({ argv: ['/bin/sh', '-c', 'echo ready; exec sleep 100'], tty: true });
    await waitForOutput(child, 'ready');
    expect(await steadily(child)).toEqual([false, false, false, false, false]);
  });

  it('a shell on a terminal waiting in `read x` waits; its child reading a file does not count', async () => {
    const child = await start({ argv: ['/bin/bash', '-c', 'read x; echo "got $x"; sleep 100'], tty: true });
    expect(await becomes(child, true)).toBe(true);
    const got = waitForOutput(child, 'got hi');
    await child.write('hi\n');
    await got;
    expect(await becomes(child, false)).toBe(false);
  });

  it('`read x` in bash with a stdin pipe waits for input', async () => {
    const child = await start({
      argv: ['/bin/bash', '-c', 'read x; echo "got $x"; exec sleep 100'],
      stdin: 'pipe',
    });
    expect(await becomes(child, true)).toBe(true);
    const got = waitForOutput(child, 'got yes');
    await child.write('yes\n');
    await got;
    expect(await becomes(child, false)).toBe(false);
  });

  it('cat with a stdin pipe waits for input; a cat reading another pipe does not', async () => {
    const reading = await start({ argv: ['cat'], stdin: 'pipe' });
    expect(await becomes(reading, true)).toBe(true);
    // Its stdin is the pipe from sleep, not the session's: nobody can type into it.
    const piped = await start({
      argv: ['/bin/sh', '-c', 'echo ready; sleep 100 | cat'],
      stdin: 'pipe',
    });
    await waitForOutput(piped, 'ready');
    expect(await steadily(piped)).toEqual([false, false, false, false, false]);
  });

  it('a node REPL (epoll on the terminal) waits for input', async () => {
    const child = await start({
      argv: [process.execPath, '-i'],
      tty: true,
      env: { PATH, NODE_NO_READLINE: '' },
    });
    await waitForOutput(child, '> ');
    expect(await becomes(child, true)).toBe(true);
  });

  it('a command without stdin never waits for input', async () => {
    const child = await start({ argv: ['/bin/sh', '-c', 'echo ready; exec cat'] });
    // cat reads /dev/null and ends: there is nothing to wait for.
    await waitForOutput(child, 'ready');
    await child.exited;
    expect(child.waitingForInput?.()).toBe(false);
  });
});

describe.runIf(!linux)('waitingForInput elsewhere (not Linux)', () => {
  it('is absent: this host cannot tell', async () => {
    const child = await start({ argv: ['/bin/sh', '-c', 'exit 0'] });
    expect(child.waitingForInput).toBeUndefined();
  });
});
