import { type ChildProcess, spawn } from 'node:child_process';
import { type SandboxNotice, SandboxUnavailableError } from '@ux/protocol/core';
import { readableText } from '@ux/protocol-utils';

/**
 * A protected name the guard keeps a command from creating: the entry `name` inside the directory
 * `dir`. `name` may be a relative path of several names below `dir` (a chain, `.config/git` in a home
 * with no `.config`): the guard watches the deepest directory of it that exists and follows each next
 * name that appears as a directory (never taking those away), until the last one, which it takes away.
 * A name on the way that appears as a link is taken away. With `link`, the name exists as a symbolic
 * link: it is kept, and anything else that appears under its name is taken away (docs/protected-paths.md).
 */
export interface GuardTarget {
  /** An existing directory, absolute. */
  dir: string;
  /** One name, or a relative path of names (at most `GUARD_MAX_CHAIN`; one with `link`). */
  name: string;
  /** The threat, for the message: "git would run its hooks", say. */
  why: string;
  /**
   * A work tree's missing `.git`: when it appears as a directory (a sandboxed `git init` or `git
   * clone`) it is left in place and its configuration surface is checked when the watch stops; as a
   * file or a link it is taken away like any target.
   */
  repository?: boolean;
  /**
   * The name exists as a symbolic link with this text (as `readlink` gives it): the link is left
   * alone, and when it is moved away, removed or replaced, whatever took its place is taken away and
   * the guard makes the link again with this text (never over an entry that is there).
   */
  link?: string;
}

/** How many names a chain target may have. */
export const GUARD_MAX_CHAIN = 32;

/**
 * A git directory a command created in a place the guard did not watch (`git clone url vendor/x`),
 * to check when the watch stops: `gitDir` is relative to `root` (a writable root, absolute), and is
 * opened below it without following links.
 */
export interface RepositoryToCheck {
  root: string;
  gitDir: string;
  /** The work tree it belongs to (absolute): where its `core.worktree` may point. */
  workTree: string;
  /**
   * A linked worktree's git directory (`<repo>/worktrees/<x>`): only its pointers are checked
   * (`commondir` must be git's `../..`, `gitdir` a file, no `config.worktree`); the repository it
   * shares is a check of its own.
   */
  linkedWorktree?: boolean;
}

export interface GuardStopOptions {
  /** Repositories to check, besides the watched `.git` targets that appeared as directories. */
  repositories?: readonly RepositoryToCheck[];
}

/** One command's watch over its targets. */
export interface GuardWatch {
  /**
   * Ends the watch, once the command's sandbox has ended: the guard handles every pending event,
   * checks each target once more, seals what it took, checks the repositories the command created
   * (the watched `.git` targets that appeared as directories, and `options.repositories`), then
   * stops watching. Resolves after every notice of this watch was delivered. Idempotent (the options
   * of the first call count).
   */
  stop(options?: GuardStopOptions): Promise<void>;
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
  /**
   * Where taken-away entries go (created 0700 at the first need), sealed; without it they are
   * removed. Bounded: see `quarantineMaxEntries` and `quarantineMaxBytes`.
   */
  quarantineDir?: string;
  /** How many entries the quarantine keeps (the oldest go first); default `QUARANTINE_MAX_ENTRIES`. */
  quarantineMaxEntries?: number;
  /** How many bytes of file content the quarantine keeps; default `QUARANTINE_MAX_BYTES`. */
  quarantineMaxBytes?: number;
  /**
   * git's template directory (`/usr/share/git-core/templates`, see `findGitTemplateDir`): the hooks of
   * a new repository must be its `*.sample` files. Without it any `*.sample` file passes.
   */
  gitTemplateDir?: string;
  /** The host's private directories, removed by the guard when the host ends (even when it is killed). */
  removeOnExit?: readonly string[];
}

export const GUARD_STOPPED_ERROR =
  'the path guard stopped; protected paths are no longer watched for this command';

/** The quarantine's bounds unless told otherwise (docs/protected-paths.md). */
export const QUARANTINE_MAX_ENTRIES = 64;
export const QUARANTINE_MAX_BYTES = 64 * 1024 * 1024;

const BACKEND = 'bwrap';
/** How many fields each record of the guard has, its type included. */
const FIELDS: Record<string, number> = { R: 2, E: 3, D: 2, Q: 4, X: 4, F: 4, S: 4, K: 6, P: 6, B: 4 };
const CLOSE_GRACE_MS = 3_000;

type RegistrationState = 'pending' | 'live' | 'stopping' | 'done';

interface Registration {
  id: string;
  targets: readonly GuardTarget[];
  /** The threat of each path the guard may report: targets, and the names on a chain's way. */
  whyByPath: Map<string, string>;
  /** The text of each kept link, by path. */
  linkByPath: Map<string, string>;
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

function mebibytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return `${mib >= 10 || Number.isInteger(mib) ? Math.round(mib) : mib.toFixed(1)} MiB`;
}

/**
 * The threat of every path the guard may report for `targets`: each target's own, and each name on a
 * chain's way (taken away when it appears as a link).
 */
function whyByPath(targets: readonly GuardTarget[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const target of targets) {
    const path = guardTargetPath(target);
    const names = target.name.split('/');
    let at = target.dir;
    for (const name of names.slice(0, -1)) {
      at = guardTargetPath({ dir: at, name });
      if (!map.has(at))
        map.set(at, `a link where ux follows the way to ${readableText(path)}: ${target.why}`);
    }
    map.set(path, target.why);
  }
  return map;
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
  if (options.quarantineMaxEntries !== undefined)
    args.push('--quarantine-max-entries', String(options.quarantineMaxEntries));
  if (options.quarantineMaxBytes !== undefined)
    args.push('--quarantine-max-bytes', String(options.quarantineMaxBytes));
  if (options.gitTemplateDir !== undefined) args.push('--git-templates', options.gitTemplateDir);
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
        registration.resolve({ stop: (stopOptions) => stop(instance, registration, stopOptions) });
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
        const link = registration.linkByPath.get(a);
        if (link !== undefined && type !== 'F') {
          const where =
            type === 'Q' ? `moved what it put there to ${readableText(b)}` : 'removed what it put there';
          deliver(registration, {
            kind: 'protected_path_undone',
            path: a,
            ...(type === 'Q' ? { movedTo: b } : {}),
            message: `the command replaced ${shown}, a link to ${readableText(link)} (${why}); a sandboxed command may not change it, so ux ${where} and put the link back.`,
          });
        } else if (type === 'Q') {
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
        } else if (registration.whyByPath.has(a)) {
          deliver(registration, {
            kind: 'protected_path_undone',
            path: a,
            error: b,
            message: `the command created ${shown} (${why}) and ux could not take it away: ${readableText(b)}. Remove it before running git or an agent there.`,
          });
        } else {
          // A repository the command created, which the guard could not check.
          deliver(registration, {
            kind: 'protected_path_undone',
            path: a,
            error: b,
            message: `the command created the git repository ${shown}: ${readableText(b)}. Look at its config and hooks before running git there.`,
          });
        }
        return;
      }
      case 'B': {
        if (registration.state !== 'live' && registration.state !== 'stopping') return;
        const why = registration.whyByPath.get(a) ?? 'a protected path';
        const link = readableText(registration.linkByPath.get(a) ?? '');
        deliver(
          registration,
          b === ''
            ? {
                kind: 'protected_path_undone',
                path: a,
                message: `the command moved or removed ${readableText(a)}, a link to ${link} (${why}); a sandboxed command may not change it, so ux put the link back.`,
              }
            : {
                kind: 'protected_path_undone',
                path: a,
                error: b,
                message: `the command moved or removed ${readableText(a)}, a link to ${link} (${why}), and ux could not put the link back: ${readableText(b)}. Put it back before the next login or git command.`,
              },
        );
        return;
      }
      case 'S': {
        if (registration.state !== 'live' && registration.state !== 'stopping') return;
        const why = registration.whyByPath.get(a) ?? 'a protected path';
        deliver(registration, {
          kind: 'protected_path_undone',
          path: a,
          movedTo: b,
          error: 'not sealed',
          message: `the command created ${readableText(a)} (${why}) and ux moved it into the quarantine, but the command went on writing into what it moved, so it could not be sealed; it stays at ${readableText(b)} until the command ends.`,
        });
        return;
      }
      case 'K': {
        if (registration.state !== 'live' && registration.state !== 'stopping') return;
        const [, , , , what = '', replaced = ''] = record;
        const where = b === '' ? 'ux removed it' : `ux moved it to ${readableText(b)}`;
        const config =
          replaced === '1' ? ", and wrote a config with only git's own settings in its place" : '';
        deliver(registration, {
          kind: 'protected_path_undone',
          path: a,
          ...(b === '' ? {} : { movedTo: b }),
          message: `the command created the git repository ${readableText(a)} with ${readableText(what)}: git does not write that itself, and git on the host would read or run it. ${where}${config}. Look at it before putting any of it back.`,
        });
        return;
      }
      case 'P': {
        if (registration.state !== 'live' && registration.state !== 'stopping') return;
        const [, , , , maxEntries = '', maxBytes = ''] = record;
        deliver(registration, {
          kind: 'protected_path_undone',
          path: options.quarantineDir ?? '',
          message: `the quarantine (${options.quarantineDir ?? ''}) keeps at most ${maxEntries} entries and ${mebibytes(Number(maxBytes))}; to make room for what this command created, ux removed its ${a} oldest ${a === '1' ? 'entry' : 'entries'} (${mebibytes(Number(b))}).`,
        });
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

  function stop(
    instance: Instance,
    registration: Registration,
    stopOptions: GuardStopOptions = {},
  ): Promise<void> {
    registration.stopped ??= new Promise<void>((resolve) => {
      registration.stopDone = resolve;
      if (registration.state !== 'live' || instance.ended) {
        resolve();
        return;
      }
      registration.state = 'stopping';
      setWaiting(instance, 1);
      const checks = (stopOptions.repositories ?? [])
        .filter(
          ({ root, gitDir, workTree }) => ![root, gitDir, workTree].some((field) => field.includes('\0')),
        )
        .map(({ root, gitDir, workTree, linkedWorktree }) => [
          'C',
          registration.id,
          root,
          gitDir,
          workTree,
          linkedWorktree ? 'w' : '',
        ]);
      send(instance, [...checks, ['U', registration.id]]);
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
          message: first
            ? `ux's path guard ${reason} while the command ran, so ${readableText(path)} and the other protected paths of this command are no longer watched; check that the command did not create them before running git or an agent there.`
            : `ux's path guard ${reason} before it checked the git repositories the command created; check their config and hooks before running git there.`,
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

  async function register(
    targets: readonly GuardTarget[],
    onNotice: (notice: SandboxNotice) => void,
  ): Promise<GuardWatch> {
    for (const target of targets) {
      const names = target.name.split('/');
      const bad =
        [target.dir, target.name, target.link ?? ''].some((field) => field.includes('\0')) ||
        !target.dir.startsWith('/') ||
        names.length > GUARD_MAX_CHAIN ||
        names.some((name) => name === '' || name === '.' || name === '..') ||
        (target.link !== undefined && (names.length !== 1 || target.link === ''));
      if (bad) {
        throw unavailable(
          `cannot watch ${JSON.stringify(target.name)} in ${JSON.stringify(target.dir)}: a guard target is a relative path of at most ${GUARD_MAX_CHAIN} names (one for a kept link) in an absolute directory`,
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
        whyByPath: whyByPath(targets),
        linkByPath: new Map(
          targets.flatMap((target) =>
            target.link === undefined ? [] : [[guardTargetPath(target), target.link] as const],
          ),
        ),
        onNotice,
        state: 'pending',
        resolve,
        reject,
        stopped: undefined,
        stopDone: undefined,
      });
      setWaiting(instance, 1);
      send(instance, [
        ...targets.map((target) =>
          target.link !== undefined
            ? ['L', id, target.dir, target.name, target.link]
            : [target.repository ? 'V' : 'W', id, target.dir, target.name],
        ),
        ['G', id],
      ]);
    });
  }

  return {
    get pid() {
      return current?.child.pid;
    },

    start() {
      current ??= start();
    },

    async watch(targets, onNotice) {
      // Nothing to watch: the guard is started only if the stop brings repositories to check.
      if (targets.length === 0) {
        let stopped: Promise<void> | undefined;
        return {
          stop: (stopOptions) =>
            (stopped ??= stopOptions?.repositories?.length
              ? register([], onNotice).then((watch) => watch.stop(stopOptions))
              : Promise.resolve()),
        };
      }
      return register(targets, onNotice);
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
