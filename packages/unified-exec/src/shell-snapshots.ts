import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Orchestrator } from '@ux/orchestrator';
import { type EffectivePolicy, SandboxUnavailableError, type UxEvent } from '@ux/protocol/core';
import {
  captureShellSnapshot,
  fileIdentity,
  isShellSnapshotFresh,
  type ShellSnapshot,
  type ShellSnapshotCache,
  type SnapshotShellKind,
  shellSnapshotCacheKey,
  snapshotCommandScript,
  snapshotShellKind,
  snapshotWatchedFiles,
  stampLoginFiles,
} from '@ux/spawn';
import { PINNED_ENVIRONMENT } from './build-environment.js';
import type { ProcessStarter } from './door-context.js';

/** What the login files may do while they are captured: read, nothing else. */
export const SNAPSHOT_CAPTURE_POLICY: EffectivePolicy = {
  fileSystem: { kind: 'restricted', entries: [{ path: { type: 'special', value: 'root' }, access: 'read' }] },
  network: 'restricted',
};

export interface ShellSnapshotsOptions {
  /** Where the snapshot files go (mode 0600 each); removed at `close()`. */
  dir: string;
  spawner: ProcessStarter;
  orchestrator: Orchestrator;
  /** The session directory: where captures run. */
  cwd: string;
  emit(event: UxEvent): void;
  onWarning?: (message: string) => void;
  /** Default 5000 ms. */
  timeoutMs?: number;
  /** Variables the environment policy keeps out of commands: kept out of snapshots too. */
  excluded?: (name: string) => boolean;
  /**
   * Snapshots kept across ux processes: looked up before a capture (stat calls, no shell),
   * stored after one. Absent: every session captures its own.
   */
  cache?: ShellSnapshotCache;
  /** What else decides a capture besides the shell, its files and the environment: the policy's excludes. */
  cacheContext?: string;
}

/**
 * The door's shell snapshots: one per shell per session, taken by running the shell as a
 * login shell once, read-only and without network (the session's sandbox backend with a read-only
 * policy), and taken again when a login file changes. A login command (`-lc`) then runs as
 * `shell -c '. SNAPSHOT; CMD'` in one process: no login files, none of their output, none of their
 * cost. A capture that fails leaves that shell on plain login commands for the session, with one
 * warning (and what the login files printed) as a `warning` event.
 */
export class ShellSnapshots {
  private readonly taken = new Map<string, Promise<ShellSnapshot | undefined>>();
  private readonly failed = new Set<string>();
  private readonly snapshotFiles = new Set<string>();
  private readonly session = randomBytes(6).toString('hex');
  private closed = false;

  constructor(private readonly options: ShellSnapshotsOptions) {}

  /**
   * The argv to launch for `argv` (what the orchestrator judged): the snapshot form for a login
   * command of bash, zsh or sh when a snapshot can be had, else `argv` unchanged.
   */
  async launchArgv(
    argv: readonly string[],
    env: Record<string, string>,
    afterSnapshot = '',
  ): Promise<string[]> {
    if (this.closed || argv.length !== 3 || argv[1] !== '-lc') return [...argv];
    const [shell, , cmd] = argv as [string, string, string];
    const kind = snapshotShellKind(shell);
    if (!kind || this.failed.has(shell)) return [...argv];
    const snapshot = await this.snapshotFor(shell, kind, env);
    // `afterSnapshot` (PATH directories the door keeps first) runs after the snapshot, before the command.
    return snapshot
      ? [shell, '-c', snapshotCommandScript(snapshot.file, `${afterSnapshot}${cmd}`, kind)]
      : [...argv];
  }

  /** The snapshot files this session may source (for `SandboxPlanRequest.hostPaths`). */
  get files(): string[] {
    return [...this.snapshotFiles];
  }

  /** Removes this session's snapshot files (they hold the login environment). */
  close(): void {
    this.closed = true;
    for (const file of this.snapshotFiles) rmSync(file, { force: true });
  }

  private snapshotFor(shell: string, kind: SnapshotShellKind, env: Record<string, string>) {
    const current = this.taken.get(shell);
    if (current) {
      return current.then((snapshot) => {
        if (!snapshot || isShellSnapshotFresh(snapshot)) return snapshot;
        // A login file changed: the next command gets a new snapshot.
        if (this.taken.get(shell) === current) this.taken.set(shell, this.capture(shell, kind, env));
        return this.taken.get(shell)!;
      });
    }
    const capture = this.capture(shell, kind, env);
    this.taken.set(shell, capture);
    return capture;
  }

  private async capture(
    shell: string,
    kind: SnapshotShellKind,
    env: Record<string, string>,
  ): Promise<ShellSnapshot | undefined> {
    const { options } = this;
    let backend: Awaited<ReturnType<Orchestrator['sandboxes']['select']>> | undefined;
    try {
      backend = await options.orchestrator.sandboxes.select();
    } catch (error) {
      // No sandbox here at all (an unsandboxed session): the login files run as the commands would.
      if (!SandboxUnavailableError.isInstance(error)) throw error;
    }
    const file = this.fileFor(kind, shell);
    const cache = options.cache;
    const key = cache
      ? shellSnapshotCacheKey({
          shell,
          kind,
          env,
          cwd: options.cwd,
          context: JSON.stringify([backend?.id ?? 'none', options.cacheContext ?? '']),
        })
      : undefined;
    if (cache && key) {
      const found = cache.lookup(key, env);
      if (found.hit) {
        const reused = this.reuse(found.entry, file, shell, kind);
        if (reused) return reused;
      }
    }
    // Stamped before the capture, as the capture stamps its own: an edit meanwhile makes the entry stale.
    const watched = cache ? snapshotWatchedFiles(shell, kind, env, options.cwd) : [];
    const stamps = watched.map((path): [string, string] => [path, fileIdentity(path)]);
    const result = await captureShellSnapshot({
      shell,
      kind,
      env,
      cwd: options.cwd,
      file,
      spawner: options.spawner,
      // The door's pinned variables (TERM, PAGER, NO_COLOR, LANG, …) still win over the login files.
      exclude: (name) =>
        name in PINNED_ENVIRONMENT ||
        name.startsWith('UX_') ||
        name.startsWith('LC_') ||
        (options.excluded?.(name) ?? false),
      timeoutMs: options.timeoutMs ?? 5000,
      ...(backend
        ? {
            wrap: async (launch: { argv: string[]; cwd: string; env: Record<string, string> }) => {
              // The snapshot being checked is sourced from the snapshot directory, which may lie where
              // the sandbox hides (ux's runtime root, a private /tmp): bound in read-only.
              const plan = await backend.plan({
                ...launch,
                policy: SNAPSHOT_CAPTURE_POLICY,
                tty: false,
                hostPaths: [options.dir],
              });
              return {
                argv: [...plan.argv],
                cwd: plan.cwd,
                env: plan.env,
                ...(plan.cleanup ? { cleanup: plan.cleanup } : {}),
              };
            },
          }
        : {}),
    });
    if (result.ok && cache && key) {
      const { snapshot } = result;
      // Not kept when it cannot be (an unsafe directory): this session still has its own file.
      cache.store(key, {
        text: readFileSync(snapshot.file, 'latin1'),
        stamps,
        changedVariables: snapshot.changedVariables,
        startValues: Object.fromEntries(snapshot.changedVariables.map((name) => [name, env[name] ?? null])),
        diagnostics: snapshot.diagnostics,
        capturedAt: snapshot.capturedAt,
      });
    }
    if (result.ok) {
      // Only an event: a login file that greets would otherwise warn on every session (`ux doctor`
      // shows the text too).
      if (result.snapshot.diagnostics !== '')
        this.warn(
          `the login files of ${shell} printed text while they were captured; commands do not show it`,
          result.snapshot.diagnostics,
          false,
        );
      return result.snapshot;
    }
    this.failed.add(shell);
    this.warn(
      `no shell snapshot for ${shell} (${result.reason}); its login commands run the login files each time for this session`,
      result.diagnostics,
    );
    return undefined;
  }

  /**
   * A cached snapshot, copied to this session's own file (0600, replaced atomically): the session's
   * commands source that file, which lives as long as the session whatever the cache evicts meanwhile.
   */
  private reuse(
    entry: {
      text: string;
      stamps: [string, string][];
      changedVariables: string[];
      diagnostics: string;
      capturedAt: number;
    },
    file: string,
    shell: string,
    kind: SnapshotShellKind,
  ): ShellSnapshot | undefined {
    const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      writeFileSync(temporary, entry.text, { encoding: 'latin1', mode: 0o600, flag: 'wx' });
      renameSync(temporary, file);
    } catch {
      // This session's directory cannot take it: capture as without a cache (which says why).
      rmSync(temporary, { force: true });
      return undefined;
    }
    if (entry.diagnostics !== '')
      this.warn(
        `the login files of ${shell} printed text while they were captured; commands do not show it`,
        entry.diagnostics,
        false,
      );
    return {
      file,
      shell,
      kind,
      capturedAt: entry.capturedAt,
      loginFiles: stampLoginFiles(entry.stamps.map(([path]) => path)),
      diagnostics: entry.diagnostics,
      changedVariables: entry.changedVariables,
    };
  }

  private warn(message: string, details: string, tellUser = true): void {
    if (tellUser) this.options.onWarning?.(message);
    this.options.emit({
      type: 'warning',
      source: 'shell_snapshot',
      message,
      ...(details ? { details } : {}),
    });
  }

  private fileFor(kind: SnapshotShellKind, shell: string): string {
    const name = shell.replace(/[^A-Za-z0-9]+/g, '_');
    const file = join(this.options.dir, `${this.session}-${kind}${name}.sh`);
    this.snapshotFiles.add(file);
    return file;
  }
}
