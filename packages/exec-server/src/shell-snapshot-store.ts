import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { EffectivePolicy, HostState, ShellEnvironmentPolicy, Spawner } from '@ux/protocol';
import { type DecodedSandboxContext, excludedByShellEnvironmentPolicy } from '@ux/protocol-utils';
import {
  captureShellSnapshot,
  isShellSnapshotFresh,
  type ShellSnapshot,
  type SnapshotShellKind,
  snapshotCommandScript,
  snapshotLoginFiles,
  snapshotShellKind,
} from '@ux/spawn';
import { MAX_SHELL_SNAPSHOTS, SHELL_SNAPSHOT_TIMEOUT_MS } from './exec-server-constants.js';
import { execServerRuntimeDir } from './exec-server-runtime-dir.js';
import { removePath } from './remove-path.js';
import { internalError } from './rpc-error.js';
import type { SandboxChoice } from './sandbox-selection.js';
import { withHostState } from './with-host-state.js';

/** The `shellSnapshot` of a `process/start`, validated. */
export interface ShellSnapshotRequest {
  scopeId: string;
  shell: { name: string; path: string };
}

export interface ShellSnapshotStoreOptions {
  spawner: Spawner;
  selectSandbox: (policy?: EffectivePolicy) => Promise<SandboxChoice>;
  /**
   * A directory the server owns; snapshots go in a `shell-snapshots` directory inside. Default: a new
   * runtime directory of this server (`execServerRuntimeDir`), removed at `close()`.
   */
  stateDir?: string;
  /** ux's own files the capture's sandbox keeps out of reach (hidden: the runtime roots). */
  hostState?: HostState;
  log: (line: string) => void;
  timeoutMs?: number;
}

/** Where a start runs, as a capture needs it. */
export interface SnapshotContext {
  cwd: string;
  env: Record<string, string>;
  sandbox: DecodedSandboxContext | undefined;
  /**
   * The start's `envPolicy`, when it had one: a name it keeps out of commands (the default `*TOKEN*`
   * excludes, `exclude`, names outside `includeOnly`) is kept out of the snapshot too, even when a
   * login file exports it.
   */
  envPolicy?: ShellEnvironmentPolicy;
}

export interface SnapshotLaunch {
  argv: string[];
  /** The snapshot file the argv sources, when it was rewritten (a sandbox must let the command read it). */
  file?: string;
}

interface Entry {
  kind: SnapshotShellKind;
  /** Names the start's `envPolicy` keeps out of commands: never exported by the snapshot. */
  excluded?: (name: string) => boolean;
  file: string;
  /** The capture in flight, or the last one's outcome. */
  current: Promise<Outcome>;
  /** `current`'s outcome once it settled; undefined while a capture runs. */
  settled: Outcome | undefined;
  lastUsed: number;
}

type Outcome =
  | { state: 'untried' }
  | { state: 'captured'; snapshot: ShellSnapshot; env: Record<string, string> }
  /** The login files' mtimes when it failed: it is tried again once one of them changes. */
  | { state: 'failed'; stamps: Map<string, number | null> };

/**
 * The exec-server's shell snapshots (Codex's `shellSnapshot` start parameter): one per (scope, shell
 * path), kept in the server's state directory (0700; each file 0600) and removed at `close()`. A start
 * whose argv is exactly `[shell.path, '-lc', SCRIPT]` runs as `[shell.path, '-c', '. SNAPSHOT; SCRIPT']`.
 * The capture runs once, read-only and without network (under the request's sandbox context, through
 * this server's sandbox backend when one runs here), and again when a login file changed or a variable
 * the login files derived starts differently; starts of one scope wait for one capture. A capture that
 * fails is logged once, and that scope and shell run their argv as given until a login file changes.
 */
export class ShellSnapshotStore {
  private readonly entries = new Map<string, Entry>();
  private readonly aborts = new AbortController();
  private dir: string | undefined;
  private ownsDir = false;
  private dirFailure = false;
  private closed = false;

  constructor(private readonly options: ShellSnapshotStoreOptions) {}

  /** The argv to launch for a start that carries `shellSnapshot`: the snapshot form, or `argv` as given. */
  async launch(
    request: ShellSnapshotRequest,
    argv: readonly string[],
    context: SnapshotContext,
  ): Promise<SnapshotLaunch> {
    const given = { argv: [...argv] };
    const { shell } = request;
    if (this.closed || argv.length !== 3 || argv[0] !== shell.path || argv[1] !== '-lc') return given;
    const kind = snapshotShellKind(shell.path);
    if (!kind) return given;
    let entry: Entry;
    try {
      entry = this.entryFor(request, kind, context.envPolicy);
    } catch (error) {
      // No private directory for snapshots (an unsafe runtime root): run the argv as given.
      if (!this.dirFailure) {
        this.dirFailure = true;
        this.options.log(
          `exec-server: warning: no shell snapshots: ${(error as Error).message}; -lc commands run the login files each time`,
        );
      }
      return given;
    }
    entry.lastUsed = Date.now();
    let outcome = await entry.current;
    if (this.needsCapture(outcome, context.env)) {
      // Checked and replaced without a pause: starts that arrive meanwhile wait for this one capture.
      if (entry.settled === outcome) {
        entry.settled = undefined;
        entry.current = this.capture(request, entry, context).then((next) => {
          entry.settled = next;
          return next;
        });
      }
      outcome = await entry.current;
    }
    // The server stopped while this start waited for the capture: run nothing.
    if (this.closed) throw internalError('the exec-server is shutting down; the command was not run');
    if (outcome.state !== 'captured') return given;
    return {
      argv: [shell.path, '-c', snapshotCommandScript(outcome.snapshot.file, argv[2]!, kind)],
      file: outcome.snapshot.file,
    };
  }

  /** Stops captures in flight and removes every snapshot (they hold the login environment). Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.aborts.abort();
    await Promise.allSettled([...this.entries.values()].map((entry) => entry.current));
    this.entries.clear();
    // Through descriptors, never following a link (the directory is private, but a caller's
    // `stateDir` may lie anywhere).
    if (this.dir) await removePath(this.ownsDir ? join(this.dir, '..') : this.dir, { recursive: true });
  }

  private entryFor(
    request: ShellSnapshotRequest,
    kind: SnapshotShellKind,
    envPolicy: ShellEnvironmentPolicy | undefined,
  ): Entry {
    // One snapshot per scope, shell and set of names kept out (a start under another policy must not
    // source a snapshot that exports what its policy drops).
    const key = `${request.scopeId}\0${request.shell.path}\0${policyKey(envPolicy)}`;
    let entry = this.entries.get(key);
    if (!entry) {
      this.evict();
      const name = createHash('sha256').update(key).digest('hex').slice(0, 24);
      const untried: Outcome = { state: 'untried' };
      entry = {
        kind,
        ...(envPolicy ? { excluded: excludedByShellEnvironmentPolicy(envPolicy) } : {}),
        file: join(this.directory(), `${name}.${kind}.sh`),
        current: Promise.resolve(untried),
        settled: untried,
        lastUsed: Date.now(),
      };
      this.entries.set(key, entry);
    }
    return entry;
  }

  private needsCapture(outcome: Outcome, env: Record<string, string>): boolean {
    switch (outcome.state) {
      case 'untried':
        return true;
      case 'failed':
        // Again only once a login file changed (a broken one may have been fixed).
        return [...outcome.stamps].some(([path, mtime]) => mtimeOf(path) !== mtime);
      case 'captured':
        // A login file changed, or a variable the login files derived (PATH from $PATH) starts from
        // another value now.
        return (
          !isShellSnapshotFresh(outcome.snapshot) ||
          outcome.snapshot.changedVariables.some((name) => env[name] !== outcome.env[name])
        );
    }
  }

  private async capture(
    request: ShellSnapshotRequest,
    entry: Entry,
    context: SnapshotContext,
  ): Promise<Outcome> {
    const { shell } = request;
    const env = { ...context.env };
    const stamps = new Map(snapshotLoginFiles(entry.kind, env).map((path) => [path, mtimeOf(path)]));
    const wrap = await this.captureWrap(context.sandbox);
    const result = await captureShellSnapshot({
      shell: shell.path,
      kind: entry.kind,
      env,
      cwd: context.cwd,
      file: entry.file,
      spawner: this.options.spawner,
      ...(entry.excluded ? { exclude: entry.excluded } : {}),
      ...(wrap ? { wrap } : {}),
      timeoutMs: this.options.timeoutMs ?? SHELL_SNAPSHOT_TIMEOUT_MS,
      signal: this.aborts.signal,
    });
    if (result.ok) {
      if (result.snapshot.diagnostics !== '')
        this.options.log(
          `exec-server: shell snapshot of ${shell.path} (scope ${request.scopeId}): the login files printed, kept out of command output:\n${indent(result.snapshot.diagnostics)}`,
        );
      return { state: 'captured', snapshot: result.snapshot, env };
    }
    rmSync(entry.file, { force: true });
    if (!this.closed)
      this.options.log(
        `exec-server: warning: no shell snapshot of ${shell.path} (scope ${request.scopeId}): ${result.reason}; its -lc commands run the login files each time until one of them changes${result.diagnostics ? `\n${indent(result.diagnostics)}` : ''}`,
      );
    return { state: 'failed', stamps };
  }

  /**
   * The capture runs read-only and without network: the request's own sandbox with every write taken
   * back, or (no sandbox asked for) the whole file system read-only, through this server's backend.
   * Without a backend here (or under an external sandbox, which is the request's own context), it runs
   * as the request would.
   */
  private async captureWrap(sandbox: DecodedSandboxContext | undefined) {
    if (sandbox?.policy.fileSystem.kind === 'external-sandbox') return undefined;
    const policy = withHostState(readOnlyPolicy(sandbox?.policy, this.directory()), this.options.hostState);
    const choice = await this.options.selectSandbox(policy);
    if (!choice.available) return undefined;
    return async (launch: { argv: string[]; cwd: string; env: Record<string, string> }) => {
      const plan = await choice.backend.plan({
        ...launch,
        policy,
        ...(sandbox ? { projectRoots: sandbox.projectRoots } : {}),
        tty: false,
        // The snapshot being checked is sourced from this server's directory, which the runtime root
        // it lies in hides from every sandbox: bound in read-only.
        hostPaths: [this.directory()],
      });
      return {
        argv: [...plan.argv],
        cwd: plan.cwd,
        env: { ...plan.env },
        ...(plan.cleanup ? { cleanup: plan.cleanup } : {}),
      };
    };
  }

  private directory(): string {
    if (!this.dir) {
      if (this.options.stateDir) {
        this.dir = join(this.options.stateDir, 'shell-snapshots');
        mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      } else {
        this.dir = join(
          execServerRuntimeDir({
            onSwept: (path) =>
              this.options.log(`exec-server: removed ${path}, left by a server that is gone`),
          }),
          'shell-snapshots',
        );
        mkdirSync(this.dir, { mode: 0o700 });
        this.ownsDir = true;
      }
    }
    return this.dir;
  }

  /** Keeps the number of snapshots bounded: the least recently used one goes (its file too). */
  private evict(): void {
    if (this.entries.size < MAX_SHELL_SNAPSHOTS) return;
    const [key, oldest] = [...this.entries].sort(([, a], [, b]) => a.lastUsed - b.lastUsed)[0]!;
    this.entries.delete(key);
    void oldest.current.then(() => rmSync(oldest.file, { force: true }));
  }
}

/**
 * `policy` with every write taken back and the network off; the snapshot directory stays readable (the
 * written file is checked by sourcing it inside the same sandbox). No policy: everything read-only.
 */
export function readOnlyPolicy(policy: EffectivePolicy | undefined, snapshotDir: string): EffectivePolicy {
  const readSnapshots = { path: { type: 'path' as const, path: snapshotDir }, access: 'read' as const };
  if (policy?.fileSystem.kind === 'restricted') {
    return {
      fileSystem: {
        ...policy.fileSystem,
        entries: [
          ...policy.fileSystem.entries.map((entry) =>
            entry.access === 'write' ? { ...entry, access: 'read' as const } : entry,
          ),
          readSnapshots,
        ],
      },
      network: 'restricted',
    };
  }
  return {
    fileSystem: {
      kind: 'restricted',
      entries: [{ path: { type: 'special', value: 'root' }, access: 'read' }, readSnapshots],
    },
    network: 'restricted',
  };
}

/** The part of an `envPolicy` that decides which names a snapshot may export. */
function policyKey(policy: ShellEnvironmentPolicy | undefined): string {
  if (!policy) return '';
  return JSON.stringify([
    policy.ignoreDefaultExcludes ?? false,
    policy.exclude ?? [],
    policy.includeOnly ?? [],
  ]);
}

function mtimeOf(path: string): number | null {
  try {
    return statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? null;
  } catch {
    return null;
  }
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  | ${line}`)
    .join('\n');
}
