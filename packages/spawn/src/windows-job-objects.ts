/**
 * The Win32 job objects the Windows spawner puts each child in, so ending the child ends its whole tree.
 * `@ux/spawn` makes no Win32 call itself: the host hands in an implementation (the koffi one is
 * `loadKoffiJobObjects()` of `@ux/sandbox-windows-token`), and tests hand in a recording fake.
 */
export interface WindowsJobObjects {
  /** CreateJobObjectW, then SetInformationJobObject with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE. */
  create(): WindowsJob;
}

/** One job object. Every method throws (a `Win32CallError` in the koffi implementation) on failure. */
export interface WindowsJob {
  /**
   * OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, pid), AssignProcessToJobObject, CloseHandle.
   * Processes the child starts after this are in the job too; ones it started before are not.
   */
  assign(pid: number): void;
  /** TerminateJobObject: every process in the job ends, with this exit code. */
  terminate(exitCode: number): void;
  /** CloseHandle on the job: kill-on-close ends whatever is still in it. */
  close(): void;
}
