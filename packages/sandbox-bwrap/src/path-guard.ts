import { type ChildProcess, spawn } from 'node:child_process';
import { readableText, type SandboxNotice, SandboxUnavailableError } from '@ux/protocol/core';

/** A protected name that does not exist yet: the entry `name` directly inside the directory `dir`. */
export interface GuardTarget {
  /** An existing directory, absolute. */
  dir: string;
  /** A single path component. */
  name: string;
  /** The threat, for the message: "git would run its hooks", say. */
  why: string;
}

/** One command's watch over its targets. */
export interface GuardWatch {
  /**
   * Ends the watch: the guard handles every pending event, checks each target once more, then stops
   * watching. Resolves after every notice of this watch was delivered. Idempotent.
   */
  stop(): Promise<void>;
}

/** Watches protected names while sandboxed commands run, and takes away any that appears. */
export interface PathGuard {
  /**
   * Watches `targets` until `stop()`: any of them that appears is moved into the quarantine (or
   * removed) at once and reported to `onNotice`. Rejects with a SandboxUnavailableError when a target
   * cannot be watched or the guard cannot run. With no target, resolves at once and starts nothing.
   */
  watch(targets: readonly GuardTarget[], onNotice: (notice: SandboxNotice) => void): Promise<GuardWatch>;
  /** The guard's pid, while one runs. */
  readonly pid: number | undefined;
  /**
   * Starts the guard now rather than at the first watch, so that it is there to remove the host's
   * private directories (`removeOnExit`) should the host be killed before it ever plans.
   */
  start(): void;
  /** Ends the guard now (tests); later watch() calls start a new one. */
  close(): Promise<void>;
}

export interface PathGuardOptions {
  /** The `ux-path-guard` program (see `nativeBinaryPath`). */
  binaryPath: string;
  /** Where taken-away entries go (created 0700 at the first need); without it they are removed. */
  quarantineDir?: string;
  /** The host's private directories, removed by the guard when the host ends (even when it is killed). */
  removeOnExit?: readonly string[];
}

export const GUARD_STOPPED_ERROR =
  'the path guard stopped; protected paths are no longer watched for this command';

const BACKEND = 'bwrap';
/** How many fields each record of the guard has, its type included. */
const FIELDS: Record<string, number> = { R: 2, E: 3, D: 2, Q: 4, X: 4, F: 4 };
const CLOSE_GRACE_MS = 3_000;

type RegistrationState = 'pending' | 'live' | 'stopping' | 'done';

interface Registration {
  id: string;
  targets: readonly GuardTarget[];
  whyByPath: Map<string, string>;
  onNotice: (notice: SandboxNotice) => void;
  state: RegistrationState;
  resolve: (watch: GuardWatch) => void;
  reject: (error: Error) => void;
  stopped: Promise<void> | undefined;
  stopDone: (() => void) | undefined;
}

interface RefHandle {
  ref?(): void;
  unref?(): void;
}

interface Instance {
  child: ChildProcess;
  regs: Map<string, Registration>;
  /** Fields of the record being read, and the bytes of the field being read. */
  fields: string[];
  partial: Buffer[];
  /** Requests waiting for a reply: while there are any, the guard's output keeps the host alive. */
  waiting: number;
  ended: boolean;
  closed: Promise<void>;
}

/** The entry's full path, as the guard reports it. */
export function guardTargetPath(target: { dir: string; name: string }): string {
  return target.dir.endsWith('/') ? `${target.dir}${target.name}` : `${target.dir}/${target.name}`;
}

export function createPathGuard(options: PathGuardOptions): PathGuard {
  let current: Instance | undefined;
  let nextId = 0;

  const args: string[] = [];
  if (options.quarantineDir !== undefined) args.push('--quarantine', options.quarantineDir);
  for (const dir of options.removeOnExit ?? []) args.push('--remove-on-exit', dir);

  const unavailable = (reason: string, cause?: unknown) =>
    new SandboxUnavailableError(
      {
        backend: BACKEND,
        reason,
        fix: 'check that ux-path-guard is built (`pnpm --filter @ux/sandbox-bwrap build`) and inotify works, or run the command without the sandbox',
      },
      cause === undefined ? undefined : { cause },
    );

  function setWaiting(instance: Instance, delta: number): void {
    const before = instance.waiting;
    instance.waiting += delta;
    const stdout = instance.child.stdout as RefHandle | null;
    if (before === 0 && instance.waiting > 0) stdout?.ref?.();
    else if (before > 0 && instance.waiting === 0) stdout?.unref?.();
  }

  function deliver(registration: Registration, notice: SandboxNotice): void {
    try {
      registration.onNotice(notice);
    } catch (error) {
      // A listener's bug is the listener's: it must not break the reading of the guard's output.
      queueMicrotask(() => {
        throw error;
      });
    }
  }

  function dispatch(instance: Instance, record: string[]): void {
    const [type, id = '', a = '', b = ''] = record;
    const registration = instance.regs.get(id);
    if (!registration) return;
    switch (type) {
      case 'R':
        if (registration.state !== 'pending') return;
        registration.state = 'live';
        setWaiting(instance, -1);
        registration.resolve({ stop: () => stop(instance, registration) });
        return;
      case 'E':
        if (registration.state !== 'pending') return;
        registration.state = 'done';
        instance.regs.delete(id);
        setWaiting(instance, -1);
        registration.reject(
          new SandboxUnavailableError({
            backend: BACKEND,
            reason: a,
            fix: 'a protected path that does not exist yet cannot be kept from being created; fix the cause, or run the command without the sandbox',
          }),
        );
        return;
      case 'D':
        finishStop(instance, registration);
        return;
      case 'Q':
      case 'X':
      case 'F': {
        if (registration.state !== 'live' && registration.state !== 'stopping') return;
        const why = registration.whyByPath.get(a) ?? 'a protected path';
        // The paths are the command's choice (a name under a directory it made): escapes in the
        // message, never control characters; `path` and `movedTo` stay as they are (data).
        const shown = readableText(a);
        if (type === 'Q') {
          deliver(registration, {
            kind: 'protected_path_undone',
            path: a,
            movedTo: b,
            message: `the command created ${shown} (${why}); a sandboxed command may not create it, so ux moved it to ${readableText(b)}. Create it outside the sandbox, or ask to run the command without the sandbox.`,
          });
        } else if (type === 'X') {
          deliver(registration, {
            kind: 'protected_path_undone',
            path: a,
            message: `the command created ${shown} (${why}); a sandboxed command may not create it, so ux removed it. Create it outside the sandbox, or ask to run the command without the sandbox.`,
          });
        } else {
          deliver(registration, {
            kind: 'protected_path_undone',
            path: a,
            error: b,
            message: `the command created ${shown} (${why}) and ux could not take it away: ${readableText(b)}. Remove it before running git or an agent there.`,
          });
        }
        return;
      }
    }
  }

  function finishStop(instance: Instance, registration: Registration): void {
    if (registration.state === 'done') return;
    const wasStopping = registration.state === 'stopping';
    registration.state = 'done';
    instance.regs.delete(registration.id);
    if (wasStopping) setWaiting(instance, -1);
    registration.stopDone?.();
  }

  function stop(instance: Instance, registration: Registration): Promise<void> {
    registration.stopped ??= new Promise<void>((resolve) => {
      registration.stopDone = resolve;
      if (registration.state !== 'live' || instance.ended) {
        resolve();
        return;
      }
      registration.state = 'stopping';
      setWaiting(instance, 1);
      send(instance, [['U', registration.id]]);
    });
    return registration.stopped;
  }

  function send(instance: Instance, records: string[][]): void {
    const bytes = Buffer.from(records.map((fields) => fields.map((field) => `${field}\0`).join('')).join(''));
    instance.child.stdin?.write(bytes);
  }

  function onData(instance: Instance, chunk: Buffer): void {
    let start = 0;
    for (let nul = chunk.indexOf(0); nul !== -1; nul = chunk.indexOf(0, start)) {
      const piece = chunk.subarray(start, nul);
      const field =
        instance.partial.length > 0
          ? Buffer.concat([...instance.partial, piece]).toString('utf8')
          : piece.toString('utf8');
      instance.partial = [];
      start = nul + 1;
      instance.fields.push(field);
      if (instance.fields.length >= (FIELDS[instance.fields[0] ?? ''] ?? 1)) {
        const record = instance.fields;
        instance.fields = [];
        dispatch(instance, record);
      }
    }
    if (start < chunk.length) instance.partial.push(Buffer.from(chunk.subarray(start)));
  }

  /** The guard is gone: nothing it watched is watched any more. */
  function ended(instance: Instance, reason: string, cause?: unknown): void {
    if (instance.ended) return;
    instance.ended = true;
    if (current === instance) current = undefined;
    for (const registration of [...instance.regs.values()]) {
      if (registration.state === 'pending') {
        registration.state = 'done';
        registration.reject(unavailable(`the path guard ${reason}`, cause));
      } else if (registration.state === 'live' || registration.state === 'stopping') {
        const first = registration.targets[0];
        const path = first ? guardTargetPath(first) : '';
        deliver(registration, {
          kind: 'protected_path_undone',
          path,
          error: GUARD_STOPPED_ERROR,
          message: `ux's path guard ${reason} while the command ran, so ${readableText(path)} and the other protected paths of this command are no longer watched; check that the command did not create them before running git or an agent there.`,
        });
        registration.state = 'done';
        registration.stopDone?.();
      }
    }
    instance.regs.clear();
    instance.waiting = 0;
  }

  function start(): Instance {
    const child = spawn(options.binaryPath, args, { detached: true, stdio: ['pipe', 'pipe', 'ignore'] });
    let markClosed: () => void = () => {};
    const instance: Instance = {
      child,
      regs: new Map(),
      fields: [],
      partial: [],
      waiting: 0,
      ended: false,
      closed: new Promise<void>((resolve) => {
        markClosed = resolve;
      }),
    };
    // The guard must never keep the host alive (while no reply is awaited), nor crash it by going away.
    child.unref();
    (child.stdin as RefHandle | null)?.unref?.();
    (child.stdout as RefHandle | null)?.unref?.();
    child.stdin?.on('error', () => {});
    child.stdout?.on('data', (chunk: Buffer) => onData(instance, chunk));
    child.on('error', (error) => {
      // Only a failure to start ends it; a failed kill() leaves it running.
      if (child.pid === undefined) {
        ended(instance, `could not start (${options.binaryPath}: ${error.message})`, error);
        markClosed();
      }
    });
    child.on('close', (code, signal) => {
      ended(instance, signal ? `was killed by ${signal}` : `exited with code ${code}`);
      markClosed();
    });
    return instance;
  }

  return {
    get pid() {
      return current?.child.pid;
    },

    start() {
      current ??= start();
    },

    async watch(targets, onNotice) {
      if (targets.length === 0) return { stop: async () => {} };
      for (const target of targets) {
        const bad = [target.dir, target.name].some((field) => field.includes('\0'));
        if (bad || !target.dir.startsWith('/') || target.name === '' || target.name.includes('/')) {
          throw unavailable(
            `cannot watch ${JSON.stringify(target.name)} in ${JSON.stringify(target.dir)}: a guard target is a single name in an absolute directory`,
          );
        }
      }
      current ??= start();
      const instance = current;
      const id = String(++nextId);
      return new Promise<GuardWatch>((resolve, reject) => {
        instance.regs.set(id, {
          id,
          targets,
          whyByPath: new Map(targets.map((target) => [guardTargetPath(target), target.why])),
          onNotice,
          state: 'pending',
          resolve,
          reject,
          stopped: undefined,
          stopDone: undefined,
        });
        setWaiting(instance, 1);
        send(instance, [...targets.map((target) => ['W', id, target.dir, target.name]), ['G', id]]);
      });
    },

    async close() {
      const instance = current;
      if (!instance) return;
      current = undefined;
      // Wait for it: end of input makes it exit (after one second when commands are still watched).
      instance.child.ref();
      instance.child.stdin?.end();
      const timer = setTimeout(() => instance.child.kill('SIGKILL'), CLOSE_GRACE_MS);
      try {
        await instance.closed;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
