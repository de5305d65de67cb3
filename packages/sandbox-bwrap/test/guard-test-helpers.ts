// Helpers of the path guard's integration tests (not exported by the package).
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SandboxNotice } from '@ux/protocol/core';
import { onTestFinished } from 'vitest';
import { checkedNativeBinary } from '../src/native-path.js';
import { createPathGuard, type PathGuard, type PathGuardOptions } from '../src/path-guard.js';

const packageRoot = fileURLToPath(new URL('..', import.meta.url));

/** Builds the native programs when their sources are newer, and returns the guard's path. */
export function builtGuard(): string {
  execFileSync(process.execPath, [join(packageRoot, 'scripts', 'build-native.mjs')], { stdio: 'inherit' });
  return checkedNativeBinary('ux-path-guard');
}

export const exists = (path: string): boolean => {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
};

/** Polls `check` until it is true; generous, since machines are noisy. */
export async function waitFor(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** A guard closed when the test finishes, whatever happens. */
export function newGuard(options: PathGuardOptions): PathGuard {
  const guard = createPathGuard(options);
  onTestFinished(() => guard.close());
  return guard;
}

export function collector(): { notices: SandboxNotice[]; onNotice: (notice: SandboxNotice) => void } {
  const notices: SandboxNotice[] = [];
  return { notices, onNotice: (notice) => notices.push(notice) };
}

/** Writes `content` beside `path` and renames it into place: the name appears with its content. */
export function plant(path: string, content: string): void {
  const draft = `${path}.draft-${process.pid}`;
  writeFileSync(draft, content);
  renameSync(draft, path);
}

/** The entries of a quarantine (not its log). */
export function quarantineEntries(quarantine: string): string[] {
  return existsSync(quarantine)
    ? readdirSync(quarantine).filter((name) => !name.startsWith('quarantine.log'))
    : [];
}

/** Every path below `dir`, relative, sorted (links not followed). */
export function treeOf(dir: string): string[] {
  const found: string[] = [];
  const walk = (at: string, prefix: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      found.push(rel);
      if (entry.isDirectory()) walk(join(at, entry.name), rel);
    }
  };
  if (existsSync(dir)) walk(dir, '');
  return found.sort();
}

/**
 * Returns once `guard` has handled every file event that came before this call: a name watched in a
 * directory of its own is created and waited for, and the guard reads its one inotify queue in order.
 * Instead of a pause before checking that something was left alone.
 */
export async function settled(guard: PathGuard, scratch: string): Promise<void> {
  const dir = mkdtempSync(join(scratch, 'barrier-'));
  const { notices, onNotice } = collector();
  const watch = await guard.watch([{ dir, name: '.barrier', why: 'a barrier' }], onNotice);
  writeFileSync(join(dir, '.barrier'), 'barrier');
  await waitFor(() => notices.length === 1, 'the barrier to be taken away');
  await watch.stop();
}
