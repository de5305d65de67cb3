import { SandboxUnavailableError } from '@ux/protocol/core';
import { ensureUxRuntimeRoot } from '@ux/protocol-utils';
import type { CliSession } from './cli-session.js';
import type { DoctorCheck } from './doctor-command.js';
import { protectSession } from './session-protection.js';

/**
 * What keeps the host from trusting what commands write (docs/threat-model.md): ux's runtime
 * directory (usable, and hidden from every sandbox), whether `/tmp` is the session's own, and the
 * repositories found in the writable roots (protected like the workspace's), with what the scan cost.
 */
export function doctorTrustChecks(
  session: CliSession,
  place: { cwd: string; homeDir: string; env: NodeJS.ProcessEnv },
): DoctorCheck[] {
  const checks: DoctorCheck[] = [];
  try {
    checks.push({
      name: 'runtime directory',
      status: 'ok',
      detail: `${ensureUxRuntimeRoot()}: sockets and private files of every ux process, hidden from every sandbox`,
    });
  } catch (error) {
    if (!SandboxUnavailableError.isInstance(error)) throw error;
    return [{ name: 'runtime directory', status: 'fail', detail: error.reason, fix: error.fix }];
  }
  const { settings } = session;
  if (settings.sandboxMode.value !== 'workspace-write' && settings.sandboxMode.value !== 'read-only') {
    checks.push({
      name: 'private /tmp',
      status: 'skip',
      detail: `no sandbox in ${settings.sandboxMode.value}`,
    });
    return checks;
  }
  checks.push(
    settings.sandboxMode.value === 'read-only'
      ? { name: 'private /tmp', status: 'ok', detail: 'read-only mode: /tmp is read-only, like everything' }
      : settings.workspaceWrite.privateTmp
        ? {
            name: 'private /tmp',
            status: 'ok',
            detail:
              "on: commands get a /tmp of the session's own; the host's /tmp is neither seen nor changed (sandbox_workspace_write.private_tmp)",
          }
        : {
            name: 'private /tmp',
            status: 'warn',
            detail:
              "off: commands write the host's /tmp, which programs outside the sandbox read (caches, repositories there)",
            fix: 'remove private_tmp = false from [sandbox_workspace_write] unless commands must leave files in /tmp',
          },
  );
  const { scan } = protectSession(
    { fileSystem: { kind: 'restricted', entries: workspaceEntries(session) }, network: 'restricted' },
    session,
    place,
  );
  checks.push({
    name: 'repositories',
    status: scan.truncated ? 'warn' : 'ok',
    detail: `${scan.repositories.length} found in the writable roots (${scan.directories} directories read in ${scan.ms.toFixed(0)} ms): their git configuration and hooks are read-only in the sandbox${scan.truncated ? '; the scan stopped at its budget, deeper repositories are not protected' : ''}`,
    ...(scan.truncated
      ? { fix: 'start ux in a narrower directory, or keep nested repositories near the top of the workspace' }
      : {}),
  });
  return checks;
}

/** The writable entries the session's mode gives (for the scan only). */
function workspaceEntries(session: CliSession) {
  const { settings } = session;
  return [
    { path: { type: 'special' as const, value: 'root' as const }, access: 'read' as const },
    ...(settings.sandboxMode.value === 'workspace-write'
      ? [
          { path: { type: 'special' as const, value: 'cwd' as const }, access: 'write' as const },
          ...settings.workspaceWrite.writableRoots.map((path) => ({
            path: { type: 'path' as const, path },
            access: 'write' as const,
          })),
          ...(settings.workspaceWrite.excludeSlashTmp
            ? []
            : [
                { path: { type: 'special' as const, value: 'slash_tmp' as const }, access: 'write' as const },
              ]),
        ]
      : []),
  ];
}
