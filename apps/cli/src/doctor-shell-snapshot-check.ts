import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localSpawnerForPlatform } from '@ux/door';
import type { SandboxBackend } from '@ux/protocol/core';
import { captureShellSnapshot, type LocalSpawner, snapshotShellKind } from '@ux/spawn';
import { SNAPSHOT_CAPTURE_POLICY } from '@ux/unified-exec';
import type { CliSession } from './cli-session.js';
import type { DoctorCheck } from './doctor-command.js';
import type { Io } from './io.js';

/**
 * Takes the shell snapshot a session would take (read-only, no network, in `backend` when there is
 * one) and says what the login files printed meanwhile: commands never show it, so this is where a
 * person sees it.
 */
export async function doctorShellSnapshotCheck(
  session: CliSession,
  io: Io,
  backend: SandboxBackend | undefined,
): Promise<DoctorCheck> {
  const name = 'shell snapshot';
  if (!session.toolPlan.shellSnapshot)
    return {
      name,
      status: 'skip',
      detail: 'shell_snapshot is off: login commands run the login files each time',
    };
  const shell = session.userShell;
  const kind = snapshotShellKind(shell);
  if (!kind)
    return { name, status: 'skip', detail: `${shell} is not bash, zsh or sh: its commands get no snapshot` };
  let spawner: LocalSpawner;
  try {
    spawner = await localSpawnerForPlatform({ platform: io.platform });
  } catch (error) {
    // The job objects check says why and how to fix it.
    const reason = error instanceof Error ? error.message : String(error);
    return { name, status: 'skip', detail: `no shell can be started here: ${reason}` };
  }
  const dir = mkdtempSync(join(tmpdir(), 'ux-doctor-snapshot-'));
  const started = Date.now();
  try {
    const env = Object.fromEntries(
      Object.entries(io.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
    );
    const result = await captureShellSnapshot({
      shell,
      kind,
      env,
      cwd: process.cwd(),
      file: join(dir, 'snapshot.sh'),
      spawner,
      ...(backend
        ? {
            wrap: async (launch) => {
              const plan = await backend.plan({
                ...launch,
                policy: SNAPSHOT_CAPTURE_POLICY,
                tty: false,
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
    const ms = Date.now() - started;
    if (!result.ok)
      return {
        name,
        status: 'warn',
        detail: `${shell}: ${result.reason}${result.diagnostics ? `; the login files printed: ${oneLine(result.diagnostics)}` : ''}; login commands will run the login files each time`,
        fix: 'fix the login file named above (it must finish within 5 s without a terminal and without writing)',
      };
    const printed = result.snapshot.diagnostics;
    return {
      name,
      status: printed ? 'warn' : 'ok',
      detail: printed
        ? `${shell}: taken in ${ms} ms; the login files printed (commands do not show it): ${oneLine(printed)}`
        : `${shell}: taken in ${ms} ms; commands source it instead of running the login files`,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function oneLine(text: string): string {
  const flat = text.replace(/\s*\n\s*/g, ' | ').trim();
  return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat;
}
