import type { ExecProcess, LaunchPlan, SandboxBackend, SandboxNotice } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { HostedProcess } from './hosted-process.js';

describe('HostedProcess', () => {
  it("writes a sandbox notice into the output as ux's own line, with the path's escapes", async () => {
    let tell: ((notice: SandboxNotice) => void) | undefined;
    const plan = {
      onNotice: (listener: (notice: SandboxNotice) => void) => {
        tell = listener;
        return () => {};
      },
    } as unknown as LaunchPlan;
    const process = {
      onOutput: () => () => {},
      exited: new Promise(() => {}),
    } as unknown as ExecProcess;
    const hosted = new HostedProcess({
      processId: 'p1',
      process,
      tty: false,
      stdinOpen: false,
      sandbox: { backend: {} as SandboxBackend, plan },
      settled: new Promise(() => {}),
      notify: () => {},
      onClosed: () => {},
    });
    tell!({
      kind: 'protected_path_undone',
      path: '/w/a\x1b[2J/.ux',
      message: 'the command created /w/a\x1b[2J\r/.ux; ux removed it',
    });
    const read = await hosted.read(0, null, 1000);
    const text = read.chunks.map((chunk) => Buffer.from(chunk.chunk, 'base64').toString('utf8')).join('');
    expect(text).toBe('\n[ux sandbox: the command created /w/a\\e[2J\\r/.ux; ux removed it]\n');
    expect(read.chunks.map((chunk) => chunk.stream)).toEqual(['stderr']);
  });

  it('tells a person what it runs, its last lines and its exit, and streams its output to watchers', async () => {
    let emit: ((chunk: Uint8Array) => void) | undefined;
    let exit: ((status: { exitCode: number }) => void) | undefined;
    const exited = new Promise<{ exitCode: number }>((resolve) => {
      exit = resolve;
    });
    const process = {
      onOutput: (listener: (chunk: Uint8Array) => void) => {
        emit = listener;
        return () => {};
      },
      exited,
      closed: exited.then(() => undefined),
      exitStatus: () => undefined,
    } as unknown as ExecProcess;
    const hosted = new HostedProcess({
      processId: 'p2',
      argv: ['bash', '-c', 'serve'],
      cwd: 'file:///w/my%20dir',
      sandboxType: 'bwrap',
      process,
      tty: true,
      stdinOpen: true,
      settled: Promise.resolve(),
      notify: () => {},
      onClosed: () => {},
    });
    const seen: string[] = [];
    const exits: number[] = [];
    const stop = hosted.watch({
      output: (data) => seen.push(Buffer.from(data).toString()),
      exit: (code) => exits.push(code),
    });
    emit!(Buffer.from('one\r\ntwo\r\n>>> '));
    await hosted.read(0, null, 1000);
    expect(seen.join('')).toBe('one\r\ntwo\r\n>>> ');
    expect(hosted.info(2)).toMatchObject({
      processId: 'p2',
      argv: ['bash', '-c', 'serve'],
      cwd: '/w/my dir',
      tty: true,
      sandbox: 'bwrap',
      running: true,
      lastLines: ['two', '>>> '],
    });
    exit!({ exitCode: 3 });
    await hosted.read(1, null, 1000);
    expect(exits).toEqual([3]);
    expect(hosted.info(5)).toMatchObject({ running: false, exitCode: 3 });
    stop();
    // A watcher that comes after the exit is told at once.
    const late: number[] = [];
    hosted.watch({ output: () => {}, exit: (code) => late.push(code) });
    await Promise.resolve();
    expect(late).toEqual([3]);
  });
});
