import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir, useLeakCheck } from '@ux/test-utils';
import { afterEach, expect, it, vi } from 'vitest';

useLeakCheck();

const saved = { cwd: process.cwd(), home: process.env.HOME };
afterEach(() => {
  process.chdir(saved.cwd);
  process.env.HOME = saved.home;
  vi.restoreAllMocks();
});

it('runs the example as shipped: a real command in the real sandbox, then a clean shutdown', async () => {
  const workspace = tempDir('ux-hello-door-');
  process.chdir(workspace);
  // A HOME of its own: the login shell must not run this machine's start-up files.
  process.env.HOME = tempDir('ux-hello-door-home-');
  const printed: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((...values: unknown[]) => {
    printed.push(
      values.map((value) => (typeof value === 'string' ? value : JSON.stringify(value))).join(' '),
    );
  });

  await import('./hello-door.js');

  expect(printed[0]).toBe('["exec_command","write_stdin"]');
  expect(printed[1]).toMatch(/^sandbox: (bwrap|landlock|seatbelt|windows-token)$/);
  const receipt = printed.at(-1) ?? '';
  expect(receipt).toContain('Process exited with code 0');
  expect(receipt).toContain('hello from the sandbox');
  expect(readFileSync(join(workspace, 'hello.txt'), 'utf8')).toBe('hello from the sandbox\n');
});

it('runs as its own process with `pnpm start`: it exits 0 once shutdown has closed everything', async () => {
  // In-process (above) the test runner keeps the event loop alive; a real `node` does not, so an
  // awaited shutdown that waits on an unref'd handle would end the program with code 13 instead.
  const workspace = tempDir('ux-hello-door-start-');
  const here = fileURLToPath(new URL('..', import.meta.url));
  const run = spawnSync('pnpm', ['--dir', here, 'start'], {
    cwd: workspace,
    encoding: 'utf8',
    env: { ...process.env, HOME: tempDir('ux-hello-door-start-home-'), INIT_CWD: workspace },
    timeout: 60_000,
  });
  expect(run.stderr).not.toMatch(/ERR|Error/);
  expect(run.status).toBe(0);
  expect(run.stdout).toContain("[ 'exec_command', 'write_stdin' ]");
  expect(run.stdout).toContain('hello from the sandbox');
  expect(readFileSync(join(workspace, 'hello.txt'), 'utf8')).toBe('hello from the sandbox\n');
});
