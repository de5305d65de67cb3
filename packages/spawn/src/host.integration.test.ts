import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { isAlive, waitUntilDead } from '@ux/protocol-testing';
import { useLeakCheck } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { defaultHelperPath } from './helper-path.js';

const HOST = fileURLToPath(new URL('../test/fixtures/spawn-host.mjs', import.meta.url));
const HELPER = defaultHelperPath();

useLeakCheck();

/**
 * Starts the fixture host in a clean process (through the helper, so it inherits nothing but stdio),
 * optionally after opening `extraFd` without close-on-exec, and returns the host with its first line.
 */
function startHost(args: string[], extraFd?: number) {
  const script = `${extraFd ? `exec ${extraFd}</etc/hostname; ` : ''}exec "$0" "$@"`;
  const host = spawn(
    HELPER,
    ['0', '--', '/bin/bash', 'bash', '-c', script, process.execPath, HOST, ...args],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const firstLine = new Promise<Record<string, unknown>>((resolve, reject) => {
    let seen = '';
    host.stdout.on('data', (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      const newline = seen.indexOf('\n');
      if (newline >= 0) resolve(JSON.parse(seen.slice(0, newline)));
    });
    host.on('exit', (code) => reject(new Error(`host exited with ${code} before reporting`)));
  });
  const exited = new Promise<void>((resolve) => host.on('close', () => resolve()));
  return { host, firstLine, exited };
}

describe('descriptors', () => {
  it('keeps a host descriptor without close-on-exec out of pipe and PTY children', async () => {
    const { firstLine, exited } = startHost(['fds'], 40);
    const report = await firstLine;
    await exited;
    // The host really holds fd 40, and a plain child_process child gets it: the leak is real.
    expect(report.raw).toContain('40');
    expect(report.pipesThroughHelper).toBe(true);
    // ls lists its own stdio and the directory it reads (3), nothing else.
    expect(report.pipe).toEqual(['0', '1', '2', '3']);
    expect(report.pty).toEqual(['0', '1', '2', '3']);
  });

  it('starts pipe children directly, with nothing extra, from a clean host', async () => {
    const { firstLine, exited } = startHost(['fds']);
    const report = await firstLine;
    await exited;
    expect(report.raw).toEqual(['0', '1', '2', '3']);
    expect(report.pipesThroughHelper).toBe(false);
    expect(report.pipe).toEqual(['0', '1', '2', '3']);
    expect(report.pty).toEqual(['0', '1', '2', '3']);
  });
});

describe('host death', () => {
  it('kills every child and grandchild, pipe and PTY, when the host is SIGKILLed', async () => {
    const { host, firstLine, exited } = startHost(['hold']);
    const report = (await firstLine) as { pids: number[]; reaper: number };
    expect(report.pids).toHaveLength(4);
    for (const pid of report.pids) expect(isAlive(pid), `pid ${pid} runs before the kill`).toBe(true);
    host.kill('SIGKILL');
    await exited;
    for (const pid of report.pids)
      expect(await waitUntilDead(pid, 5_000), `pid ${pid} died with the host`).toBe(true);
    expect(await waitUntilDead(report.reaper, 5_000), 'the reaper exits after its work').toBe(true);
  });

  it('kills them too when the host exits normally with children still running', async () => {
    const { firstLine, exited } = startHost(['hold', 'exit']);
    const report = (await firstLine) as { pids: number[]; reaper: number };
    await exited;
    for (const pid of report.pids)
      expect(await waitUntilDead(pid, 5_000), `pid ${pid} died with the host`).toBe(true);
  });
});
