import { tmpdir } from 'node:os';
import type { ExecProcess } from '@ux/protocol/core';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createWindowsSpawner } from './windows-spawner.js';

// These start real processes through ConPTY and child_process on Windows; everywhere else they are
// reported as skipped. They run without job objects (those come from @ux/sandbox-windows-token, which
// this package does not depend on): the job-object half is `koffi-job-objects.integration.test.ts`
// there. None of them has run yet: see "Not run on Windows" in the README.
const onWindows = process.platform === 'win32';
const env = (): Record<string, string> => {
  const pick = ['SystemRoot', 'SystemDrive', 'Path', 'PATHEXT', 'TEMP', 'TMP', 'ComSpec', 'windir'];
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] =>
        entry[1] !== undefined && pick.some((name) => name.toUpperCase() === entry[0].toUpperCase()),
    ),
  );
};

async function run(child: ExecProcess): Promise<{ text: string; exitCode: number }> {
  onTestFinished(() => child.terminate());
  const chunks: Buffer[] = [];
  child.onOutput((chunk) => chunks.push(Buffer.from(chunk)));
  const { exitCode } = await child.exited;
  await child.closed;
  return { text: Buffer.concat(chunks).toString('utf8'), exitCode };
}

describe('createWindowsSpawner on Windows', () => {
  it.skipIf(!onWindows)(
    'runs cmd.exe on pipes, with its exit code and the exact environment (needs Windows)',
    async () => {
      const spawner = createWindowsSpawner();
      const child = await spawner.spawn({
        argv: ['cmd.exe', '/d', '/s', '/c', 'echo %UX_ONLY%& exit /b 17'],
        cwd: tmpdir(),
        env: { ...env(), UX_ONLY: 'given "value"' },
        tty: false,
        stdin: 'closed',
      });
      const { text, exitCode } = await run(child);
      expect(text.trim()).toBe('given "value"');
      expect(exitCode).toBe(17);
    },
  );

  it.skipIf(!onWindows)(
    'passes awkward arguments through the C runtime quoting (needs Windows)',
    async () => {
      const spawner = createWindowsSpawner();
      const argv = ['a b', 'say "hi"', 'C:\\dir with space\\', '', 'ü'];
      const child = await spawner.spawn({
        argv: [
          process.execPath,
          '-e',
          'process.stdout.write(JSON.stringify(process.argv.slice(1)))',
          ...argv,
        ],
        cwd: tmpdir(),
        env: env(),
        tty: false,
        stdin: 'closed',
      });
      expect(JSON.parse((await run(child)).text)).toEqual(argv);
    },
  );

  it.skipIf(!onWindows)(
    'runs a PTY on ConPTY and reads its output and exit code (needs Windows)',
    async () => {
      const spawner = createWindowsSpawner();
      const child = await spawner.spawn({
        argv: ['cmd.exe', '/d', '/c', 'echo conpty-ok& exit /b 3'],
        cwd: tmpdir(),
        env: env(),
        tty: true,
        stdin: 'pipe',
      });
      const { text, exitCode } = await run(child);
      expect(text).toContain('conpty-ok');
      expect(exitCode).toBe(3);
    },
  );

  it.skipIf(!onWindows)('interrupts a PTY child with Ctrl-C (needs Windows)', async () => {
    const spawner = createWindowsSpawner();
    const child = await spawner.spawn({
      argv: [process.execPath, '-e', 'setTimeout(() => {}, 60000)'],
      cwd: tmpdir(),
      env: env(),
      tty: true,
      stdin: 'pipe',
    });
    setTimeout(() => void child.interrupt(), 1000);
    expect(await child.exited).toEqual({ exitCode: 130, signal: 'SIGINT' });
  });

  it.skipIf(!onWindows)('terminates a pipe child (needs Windows)', async () => {
    const spawner = createWindowsSpawner();
    const child = await spawner.spawn({
      argv: [process.execPath, '-e', 'setTimeout(() => {}, 60000)'],
      cwd: tmpdir(),
      env: env(),
      tty: false,
      stdin: 'pipe',
    });
    await child.terminate();
    expect((await child.exited).exitCode).not.toBe(0);
  });
});
