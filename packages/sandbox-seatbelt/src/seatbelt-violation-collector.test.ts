import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { SandboxUnavailableError } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { createSeatbeltViolationCollector, type LogStreamProcess } from './seatbelt-violation-collector.js';

/** A stand-in for `log stream`: records its arguments, lets the test write lines and exit. */
function fakeLog() {
  const calls: string[][] = [];
  const emitter = new EventEmitter();
  const stdout = new PassThrough();
  let killed: string | undefined;
  const process: LogStreamProcess = {
    stdout,
    on: (event, listener) => emitter.on(event, listener),
    kill: (signal) => {
      killed = signal;
      setImmediate(() => emitter.emit('exit', null));
      return true;
    },
  };
  return {
    calls,
    spawn: (args: string[]) => {
      calls.push(args);
      return process;
    },
    line: (text: string) => stdout.write(`${text}\n`),
    exit: (code: number) => emitter.emit('exit', code),
    killed: () => killed,
  };
}

const event = (message: string) => JSON.stringify({ eventMessage: message, processID: 0 });

describe('createSeatbeltViolationCollector', () => {
  it('refuses to start off macOS, saying why', async () => {
    const collector = createSeatbeltViolationCollector({ platform: 'linux', id: 'ab' });
    const error = await collector.start().catch((e: unknown) => e);
    expect(SandboxUnavailableError.isInstance(error)).toBe(true);
    expect((error as SandboxUnavailableError).reason).toContain('not on this platform (linux)');
  });

  it('streams the unified log filtered on its prefix and hands each tag its own violations', async () => {
    const log = fakeLog();
    const collector = createSeatbeltViolationCollector({
      platform: 'darwin',
      id: 'c0ffee',
      spawnLogStream: log.spawn,
      flushGraceMs: 5,
    });
    const started = collector.start();
    log.line('Filtering the log data using "eventMessage CONTAINS \\"ux-sbx-c0ffee\\""');
    await started;
    expect(log.calls).toEqual([
      ['stream', '--style', 'ndjson', '--predicate', 'eventMessage CONTAINS "ux-sbx-c0ffee"'],
    ]);

    const first = collector.newTag();
    const second = collector.newTag();
    expect([first, second]).toEqual(['ux-sbx-c0ffee-1', 'ux-sbx-c0ffee-2']);
    log.line(event(`Sandbox: cat(10) deny(1) file-read-data /secret ${first}`));
    log.line(event(`Sandbox: touch(11) deny(1) file-write-create /outside ${second}`));
    log.line(event('Sandbox: other(12) deny(1) file-read-data /x ux-sbx-deadbeef-1'));
    log.line('not json, not a violation');

    expect(await collector.take(first)).toEqual([
      { process: 'cat', pid: 10, operation: 'file-read-data', target: '/secret', tag: first },
    ]);
    expect(await collector.take(first)).toEqual([]);
    expect((await collector.take(second)).map((v) => v.target)).toEqual(['/outside']);

    await collector.stop();
    expect(log.killed()).toBe('SIGTERM');
  });

  it('keeps only the newest violations of a tag', async () => {
    const log = fakeLog();
    const collector = createSeatbeltViolationCollector({
      platform: 'darwin',
      id: '1',
      spawnLogStream: log.spawn,
      flushGraceMs: 5,
      maxPerTag: 2,
    });
    const started = collector.start();
    log.line('Filtering the log data');
    await started;
    const tag = collector.newTag();
    for (const n of [1, 2, 3]) log.line(event(`Sandbox: cat(${n}) deny(1) file-read-data /f${n} ${tag}`));
    expect((await collector.take(tag)).map((v) => v.pid)).toEqual([2, 3]);
    await collector.stop();
  });

  it('fails start() with a clear error when log stream exits before it is ready', async () => {
    const log = fakeLog();
    const collector = createSeatbeltViolationCollector({
      platform: 'darwin',
      id: '2',
      spawnLogStream: log.spawn,
    });
    const started = collector.start();
    log.exit(64);
    const error = await started.catch((e: unknown) => e);
    expect(SandboxUnavailableError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('log stream exited (code 64) before it was ready');
  });

  it('does not wait for ever for the banner', async () => {
    const log = fakeLog();
    const collector = createSeatbeltViolationCollector({
      platform: 'darwin',
      id: '3',
      spawnLogStream: log.spawn,
      readyTimeoutMs: 20,
    });
    await collector.start();
    await collector.stop();
  });
});
