import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { SandboxUnavailableError } from '@ux/protocol/core';
import { parseSeatbeltViolation, type SeatbeltViolation } from './seatbelt-violation.js';

/** The part of a child process the collector uses (a `ChildProcess` fits). */
export interface LogStreamProcess {
  readonly stdout: Readable | null;
  on(event: 'exit', listener: (code: number | null) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  kill(signal?: NodeJS.Signals): boolean;
}

export interface SeatbeltViolationCollectorOptions {
  /** Default `process.platform`; the collector only runs on `darwin`. */
  platform?: NodeJS.Platform;
  /** Starts `log` with these arguments; default spawns `/usr/bin/log`. */
  spawnLogStream?: (args: string[]) => LogStreamProcess;
  /** Hex id shared by this collector's tags; random by default. */
  id?: string;
  /** How long `start()` waits for `log stream` to say it is filtering. Default 2000 ms. */
  readyTimeoutMs?: number;
  /** How long `take()` waits for late log lines. Default 100 ms. */
  flushGraceMs?: number;
  /** Violations kept per tag; older ones are dropped. Default 100. */
  maxPerTag?: number;
}

/**
 * Collects Seatbelt violations from the macOS unified log for the commands ux sandboxes. Each plan gets
 * a tag that its profile attaches to every deny (`(with message "ux-sbx-…")`); one `log stream` filtered
 * on the collector's prefix reads them, and `take(tag)` hands a command its own.
 */
export interface SeatbeltViolationCollector {
  /** `ux-sbx-<id>`; every tag starts with it. */
  readonly tagPrefix: string;
  /** Starts `log stream` and resolves once it is filtering. Rejects with `SandboxUnavailableError` off macOS. */
  start(): Promise<void>;
  /** A new tag for one command. */
  newTag(): string;
  /** The violations seen for a tag (after a short grace for late lines), forgetting them. */
  take(tag: string): Promise<SeatbeltViolation[]>;
  /** Stops `log stream`. */
  stop(): Promise<void>;
}

export function createSeatbeltViolationCollector(
  options: SeatbeltViolationCollectorOptions = {},
): SeatbeltViolationCollector {
  const platform = options.platform ?? process.platform;
  const tagPrefix = `ux-sbx-${options.id ?? randomBytes(4).toString('hex')}`;
  if (!/^ux-sbx-[0-9a-f]+$/.test(tagPrefix)) throw new Error(`collector id must be hex, got ${options.id}`);
  const spawnLogStream =
    options.spawnLogStream ??
    ((args: string[]) => spawn('/usr/bin/log', args, { stdio: ['ignore', 'pipe', 'ignore'] }));
  const maxPerTag = options.maxPerTag ?? 100;
  const byTag = new Map<string, SeatbeltViolation[]>();
  let child: LogStreamProcess | undefined;
  let exited: Promise<void> | undefined;
  let started: Promise<void> | undefined;
  let counter = 0;

  const record = (line: string) => {
    let message = line;
    try {
      const event = JSON.parse(line) as { eventMessage?: unknown };
      if (typeof event.eventMessage === 'string') message = event.eventMessage;
    } catch {
      // Not ndjson (the banner, or `--style compact`): read the line as the message itself.
    }
    const violation = parseSeatbeltViolation(message);
    if (!violation?.tag?.startsWith(`${tagPrefix}-`)) return;
    const list = byTag.get(violation.tag) ?? [];
    list.push(violation);
    if (list.length > maxPerTag) list.shift();
    byTag.set(violation.tag, list);
  };

  const begin = () =>
    new Promise<void>((resolve, reject) => {
      const unavailable = (reason: string) =>
        new SandboxUnavailableError({
          backend: 'seatbelt',
          reason: `the violation collector could not read the unified log: ${reason}`,
          fix: 'check that /usr/bin/log works for this user (`log stream --help`)',
        });
      let ready = false;
      const markReady = () => {
        if (ready) return;
        ready = true;
        clearTimeout(timer);
        resolve();
      };
      // `log stream` prints "Filtering the log data using …" first; do not wait for ever if it does not.
      const timer = setTimeout(markReady, options.readyTimeoutMs ?? 2000);
      timer.unref();
      const logProcess = spawnLogStream([
        'stream',
        '--style',
        'ndjson',
        '--predicate',
        `eventMessage CONTAINS "${tagPrefix}"`,
      ]);
      child = logProcess;
      exited = new Promise((done) => logProcess.on('exit', () => done()));
      logProcess.on('error', (error: Error) => {
        clearTimeout(timer);
        if (!ready) reject(unavailable(error.message));
      });
      logProcess.on('exit', (code: number | null) => {
        clearTimeout(timer);
        if (!ready) reject(unavailable(`log stream exited (code ${code}) before it was ready`));
      });
      if (logProcess.stdout) {
        createInterface({ input: logProcess.stdout }).on('line', (line) => {
          markReady();
          record(line);
        });
      }
    });

  return {
    tagPrefix,
    start() {
      if (platform !== 'darwin') {
        return Promise.reject(
          new SandboxUnavailableError({
            backend: 'seatbelt',
            reason: `the violation collector reads the macOS unified log; not on this platform (${platform})`,
            fix: 'use it on macOS only; elsewhere classifyDenial still recognises denials from the output',
          }),
        );
      }
      started ??= begin();
      return started;
    },
    newTag() {
      counter += 1;
      return `${tagPrefix}-${counter}`;
    },
    async take(tag) {
      await sleep(options.flushGraceMs ?? 100);
      const violations = byTag.get(tag) ?? [];
      byTag.delete(tag);
      return violations;
    },
    async stop() {
      if (!child) return;
      child.kill('SIGTERM');
      await exited;
      child = undefined;
      started = undefined;
      byTag.clear();
    },
  };
}
