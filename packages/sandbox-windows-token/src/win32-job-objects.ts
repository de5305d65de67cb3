import type { Win32Api, Win32Handle } from './win32-api.js';

/** OpenProcess access for AssignProcessToJobObject: PROCESS_SET_QUOTA | PROCESS_TERMINATE. */
export const JOB_ASSIGN_PROCESS_ACCESS = 0x0100 | 0x0001;

/** The Win32 calls a job port makes; the launcher's `Win32Api` plus OpenProcess. */
export interface Win32JobApi
  extends Pick<
    Win32Api,
    | 'createJobObject'
    | 'setKillOnJobClose'
    | 'assignProcessToJobObject'
    | 'terminateJobObject'
    | 'closeHandle'
  > {
  /** OpenProcess(access, FALSE, pid). */
  openProcess(pid: number, access: number): Win32Handle;
}

/** One kill-on-close job (the shape of `WindowsJob` in `@ux/spawn`). */
export interface Win32Job {
  assign(pid: number): void;
  terminate(exitCode: number): void;
  close(): void;
}

/**
 * Job objects for a spawner: the shape of `WindowsJobObjects` in `@ux/spawn` (checked by shape, this
 * package does not depend on it), so `createLocalSpawner({ windows: { jobObjects } })` can end a
 * command's whole tree on Windows.
 */
export interface Win32JobObjects {
  create(): Win32Job;
}

/**
 * The call sequence of a job port, against any `Win32JobApi` (the koffi one: `loadKoffiJobObjects`):
 * `create` is CreateJobObjectW + SetInformationJobObject(KILL_ON_JOB_CLOSE), closing the job again if
 * the limit cannot be set; `assign` opens the process, assigns it and closes the process handle whatever
 * happens; `terminate` is TerminateJobObject; `close` is CloseHandle, once.
 */
export function win32JobObjects(api: Win32JobApi): Win32JobObjects {
  return {
    create() {
      const handle = api.createJobObject();
      try {
        api.setKillOnJobClose(handle);
      } catch (error) {
        api.closeHandle(handle);
        throw error;
      }
      let closed = false;
      return {
        assign(pid) {
          const process = api.openProcess(pid, JOB_ASSIGN_PROCESS_ACCESS);
          try {
            api.assignProcessToJobObject(handle, process);
          } finally {
            api.closeHandle(process);
          }
        },
        terminate(exitCode) {
          if (!closed) api.terminateJobObject(handle, exitCode);
        },
        close() {
          if (closed) return;
          closed = true;
          api.closeHandle(handle);
        },
      };
    },
  };
}
