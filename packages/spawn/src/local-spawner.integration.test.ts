import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  InvalidArgumentsError,
  SpawnFailedError,
  type SpawnRequest,
  StdinClosedError,
  UxError,
} from '@ux/protocol';
import { runToEnd, waitForImage, waitForOutput } from '@ux/protocol-testing';
import { tempDir, useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createLocalSpawner } from './local-spawner.js';
import { MAX_STDIN_QUEUED_BYTES } from './spawn-constants.js';

const spawner = createLocalSpawner();
const PATH = '/usr/local/bin:/usr/bin:/bin';

beforeAll(async () => {
  await warmUpSpawner(spawner);
});
useLeakCheck();

async function start(request: Partial<SpawnRequest> & { argv: string[] }) {
  const child = await spawner.spawn({ cwd: '/', env: { PATH }, tty: false, stdin: 'closed', ...request });
  onTestFinished(() => child.terminate());
  return child;
}

function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

describe.each([false, true])('tty=%s', (tty) => {
  it('makes the child the leader of its own session and process group', async () => {
    const child = await start({ argv: ['sleep', '5'], tty });
    const [, , pgid, session] = statFields(child.pid!);
    expect(Number(pgid)).toBe(child.pid);
    expect(Number(session)).toBe(child.pid);
  });

  it('has its process group the moment spawn resolves: a kill sent at once is never lost', async () => {
    for (let round = 0; round < 10; round++) {
      const child = await start({ argv: ['sleep', '5'], tty });
      await child.terminate();
      // No clock needed: the exit code tells. SIGTERM reached sleep (143); a kill sent before the group
      // existed would have been lost, and sleep would end by itself (0) or by the SIGKILL after the
      // grace (137).
      const status = await child.exited;
      expect(status?.exitCode).toBe(143);
      await child.closed;
    }
  });

  it('passes exactly the given environment, without TERM or PWD added', async () => {
    const child = await start({ argv: ['/usr/bin/env'], env: { PATH, ONLY: 'this' }, tty });
    const lines = (await runToEnd(child)).text.split(/\r?\n/).filter(Boolean).sort();
    expect(lines).toEqual([`PATH=${PATH}`, 'ONLY=this'].sort());
  });

  it('keeps a given PWD even when it differs from the working directory', async () => {
    const child = await start({
      argv: ['/usr/bin/env'],
      env: { PATH, PWD: '/somewhere', TERM: 'dumb' },
      tty,
    });
    const lines = (await runToEnd(child)).text.split(/\r?\n/).filter(Boolean).sort();
    expect(lines).toEqual([`PATH=${PATH}`, 'PWD=/somewhere', 'TERM=dumb'].sort());
  });

  it('gives the child the argv[0] it is asked to', async () => {
    const child = await start({ argv: ['/bin/cat', '/proc/self/cmdline'], arg0: 'renamed-cat', tty });
    expect((await runToEnd(child)).text.split('\0')[0]).toBe('renamed-cat');
  });

  it('reports SIGINT from interrupt() as exit code 130', async () => {
    const child = await start({ argv: ['/bin/sh', '-c', 'echo ready; exec sleep 30'], tty });
    await waitForOutput(child, 'ready');
    // dash holds a SIGINT that arrives before the exec until sleep ends; interrupt once sleep runs.
    await waitForImage(child.pid, 'sleep');
    await child.interrupt();
    expect((await child.exited).exitCode).toBe(130);
  });

  it('refuses a write after exit with StdinClosedError', async () => {
    const child = await start({ argv: ['true'], tty, stdin: 'pipe' });
    await runToEnd(child);
    await expect(child.write('late')).rejects.toSatisfy(
      (error) => StdinClosedError.isInstance(error) && error.reason === 'exited',
    );
  });

  it('accepts a large write and refuses more than a child that does not read can queue, without hanging', async () => {
    const child = await start({ argv: ['sleep', '30'], tty, stdin: 'pipe' });
    await child.write(new Uint8Array(4 * 1024 * 1024).fill(0x61));
    const refused = child.write(new Uint8Array(MAX_STDIN_QUEUED_BYTES).fill(0x61));
    await expect(refused).rejects.toSatisfy(
      (error) =>
        UxError.isInstance(error) &&
        /refusing to write 8388608 bytes: \d+ bytes are still waiting/.test(error.message),
    );
  });
});

describe('PTY', () => {
  it('passes bytes that are not UTF-8 through unchanged', async () => {
    const child = await start({ argv: ['/bin/sh', '-c', "printf '\\377\\376x'"], tty: true });
    expect([...(await runToEnd(child)).output]).toEqual([0xff, 0xfe, 0x78]);
  });

  it('refuses a size no terminal has', async () => {
    const child = await start({ argv: ['sleep', '5'], tty: true });
    expect(() => child.resize?.({ rows: 0, cols: 80 })).toThrow(
      'rows and cols must be whole numbers from 1 to 10000',
    );
    await expect(
      spawner.spawn({
        argv: ['true'],
        cwd: '/',
        env: { PATH },
        tty: true,
        stdin: 'closed',
        size: { rows: 24, cols: 1.5 },
      }),
    ).rejects.toThrow('invalid spawn arguments: size: rows and cols must be whole numbers from 1 to 10000');
  });
});

describe('bad input', () => {
  const base = { cwd: '/', env: { PATH }, tty: false, stdin: 'closed' as const };

  it('names a program that is a directory, or not executable', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'tool'));
    writeFileSync(join(dir, 'script'), '#!/bin/sh\necho hi\n');
    chmodSync(join(dir, 'script'), 0o644);
    await expect(spawner.spawn({ ...base, argv: [join(dir, 'tool')] })).rejects.toThrow(
      `failed to start ${join(dir, 'tool')}: is a directory`,
    );
    await expect(spawner.spawn({ ...base, argv: [join(dir, 'script')] })).rejects.toThrow(
      `failed to start ${join(dir, 'script')}: permission denied (not executable)`,
    );
    await expect(spawner.spawn({ ...base, argv: ['no-such-program-ux'] })).rejects.toThrow(
      `failed to start no-such-program-ux: not found on PATH (${PATH})`,
    );
  });

  it('resolves a relative program path against the working directory', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'hello'), '#!/bin/sh\necho relative-ok\n', { mode: 0o755 });
    const child = await start({ argv: ['./hello'], cwd: dir });
    expect((await runToEnd(child)).text).toBe('relative-ok\n');
  });

  it('names a working directory that is a file, or relative', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'file'), '');
    await expect(spawner.spawn({ ...base, argv: ['true'], cwd: join(dir, 'file') })).rejects.toThrow(
      `failed to start true: working directory ${join(dir, 'file')} is not a directory`,
    );
    await expect(spawner.spawn({ ...base, argv: ['true'], cwd: 'relative' })).rejects.toSatisfy(
      SpawnFailedError.isInstance,
    );
  });

  it('refuses NUL bytes and invalid variable names, listing each', async () => {
    const error = await spawner
      .spawn({ ...base, argv: ['echo', 'a\0b'], env: { PATH, 'BAD=NAME': 'x', OK: 'y\0z' } })
      .catch((caught: unknown) => caught);
    expect(InvalidArgumentsError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe(
      'invalid spawn arguments: argv[1]: must not contain a NUL byte; env.BAD=NAME: is not a valid variable name; env.OK: must not contain a NUL byte',
    );
  });
});

describe('PTY output at exit', () => {
  it('delivers every byte a command writes just before it exits, run after run', async () => {
    // node-pty's own reader loses the tail of such output in a good share of runs; 60 runs catch it.
    const short: number[] = [];
    for (let run = 0; run < 60; run++) {
      const child = await start({ argv: ['/usr/bin/head', '-c', '20000', '/dev/zero'], tty: true });
      const { output } = await runToEnd(child);
      if (output.length !== 20000) short.push(output.length);
    }
    expect(short).toEqual([]);
  });
});
