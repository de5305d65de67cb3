import { windowsCommandLine } from '@ux/protocol-utils';
import type { WindowsTokenLaunchSpec } from './launch-spec.js';
import { LOCAL_SYSTEM_SID } from './win32-access.js';
import type { ResolvedAce, Win32Api, Win32Handle } from './win32-api.js';

/** The launcher's own failures (not the command's) exit with this code, like `env` and `docker run`. */
export const LAUNCHER_FAILURE_EXIT_CODE = 125;

/** What the launcher takes from its process; injected so the sequence is testable anywhere. */
export interface LauncherHost {
  env: Readonly<Record<string, string>>;
  cwd: string;
  /** A fresh SID for this run (`randomRunSid`). */
  newRunSid(): string;
  writeError(text: string): void;
  /**
   * Calls `handler` when the launcher is told to stop (Ctrl+Break, the console closing); returns a
   * function that stops listening. Ctrl+C reaches the command itself through the console, so it is not one.
   */
  onTerminate(handler: () => void): () => void;
}

/**
 * Applies a plan through the Win32 API and runs the command: restricted token; ACEs added in plan order
 * and recorded; a job object that kills the whole tree when it closes; the process created suspended,
 * put in the job, then resumed. After it exits (or when anything fails midway) the job is closed and
 * every recorded ACE the plan marks `after-run` is removed, newest first. Returns the exit code.
 */
export async function runWindowsTokenLauncher(
  spec: WindowsTokenLaunchSpec,
  argv: readonly string[],
  api: Win32Api,
  host: LauncherHost,
): Promise<number> {
  const handles: Win32Handle[] = [];
  const applied: ResolvedAce[] = [];
  let job: Win32Handle | undefined;
  let stopListening: (() => void) | undefined;
  const runSid = host.newRunSid();
  try {
    const base = api.openProcessToken();
    handles.push(base);
    const logon = api.getLogonSid(base);
    const restricting = spec.token.restrictingSids.flatMap((sid) =>
      sid === '<run>' ? [runSid] : sid === '<logon>' ? (logon ? [logon] : []) : [sid],
    );
    const token = api.createRestrictedToken(base, spec.token.flags, restricting);
    handles.push(token);
    // Pipes and other objects the child creates must be writable by the token's restricting SIDs too.
    api.setTokenDefaultDacl(token, [...(logon ? [logon] : []), spec.capabilitySid, runSid, LOCAL_SYSTEM_SID]);

    for (const ace of spec.aces) {
      const resolved: ResolvedAce = {
        path: ace.path,
        sid: ace.trustee === 'capability' ? spec.capabilitySid : runSid,
        type: ace.type,
        mask: ace.mask,
        flags: ace.flags,
      };
      // A grant an earlier run left is reused; ux only ever removes entries it added itself.
      if (ace.trustee === 'capability' && api.hasExplicitAce(resolved)) continue;
      api.addAce(resolved);
      if (ace.undo === 'after-run') applied.push(resolved);
    }

    job = api.createJobObject();
    api.setKillOnJobClose(job);
    const child = api.createProcessAsUser(token, {
      commandLine: windowsCommandLine(argv, { tool: 'sandbox plan' }),
      env: host.env,
      cwd: host.cwd,
      inheritStdio: !spec.tty,
    });
    handles.push(child.thread, child.process);
    try {
      api.assignProcessToJobObject(job, child.process);
    } catch (error) {
      // Still suspended: it never ran a single instruction.
      api.terminateProcess(child.process, LAUNCHER_FAILURE_EXIT_CODE);
      throw error;
    }
    const activeJob = job;
    stopListening = host.onTerminate(() => api.terminateJobObject(activeJob, 1));
    api.resumeThread(child.thread);
    return await api.waitForExit(child.process);
  } catch (error) {
    host.writeError(`ux-windows-token: ${error instanceof Error ? error.message : String(error)}\n`);
    return LAUNCHER_FAILURE_EXIT_CODE;
  } finally {
    stopListening?.();
    // Closing the job kills whatever the command left running, before its protections go away.
    if (job !== undefined) closeQuietly(api, job, host);
    for (const ace of applied.reverse()) {
      try {
        api.removeAce(ace);
      } catch (error) {
        host.writeError(`ux-windows-token: could not remove the ACE on ${ace.path}: ${String(error)}\n`);
      }
    }
    for (const handle of handles.reverse()) closeQuietly(api, handle, host);
  }
}

function closeQuietly(api: Win32Api, handle: Win32Handle, host: LauncherHost): void {
  try {
    api.closeHandle(handle);
  } catch (error) {
    host.writeError(`ux-windows-token: CloseHandle: ${String(error)}\n`);
  }
}
