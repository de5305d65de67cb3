import { markError, UxError } from '@ux/protocol/core';

/** An open Win32 handle (opaque: a pointer value on the real API, anything in a fake). */
export type Win32Handle = bigint | number | string;

/** An ACE with its SID made concrete, as the launcher applies it. */
export interface ResolvedAce {
  path: string;
  sid: string;
  type: 'allow' | 'deny';
  mask: number;
  flags: number;
}

export interface CreateProcessOptions {
  commandLine: string;
  /** The complete environment of the child. */
  env: Readonly<Record<string, string>>;
  cwd: string;
  /** Pass the launcher's stdin, stdout and stderr (and only those) to the child; false for a console child. */
  inheritStdio: boolean;
}

export interface CreatedProcess {
  process: Win32Handle;
  thread: Win32Handle;
  pid: number;
}

const WIN32_CALL_FAILED = 'ux.error.win32-call';

/** A failed Win32 call: the function and its Win32 error code (`GetLastError`). */
export class Win32CallError extends UxError {
  constructor(
    readonly fn: string,
    readonly win32Code: number,
    detail = '',
  ) {
    super(
      'win32_call_failed',
      `${fn} failed with Win32 error ${win32Code}${win32Code === 5 ? ' (ERROR_ACCESS_DENIED)' : ''}${detail ? `: ${detail}` : ''}`,
    );
    this.name = 'Win32CallError';
    markError(this, WIN32_CALL_FAILED);
  }
  static override isInstance(error: unknown): error is Win32CallError {
    return UxError.hasMarker(error, WIN32_CALL_FAILED);
  }
  override toJSON() {
    return { ...super.toJSON(), fn: this.fn, win32Code: this.win32Code };
  }
}

/**
 * The Win32 surface the launcher uses, one method per step, named after the Win32 function it calls.
 * The real one binds advapi32 and kernel32 with koffi (`loadKoffiWin32Api`); tests hand in a recording
 * fake and check the exact sequence. Every method throws `Win32CallError` on failure.
 */
export interface Win32Api {
  /** OpenProcessToken(GetCurrentProcess(), DUPLICATE | QUERY | ASSIGN_PRIMARY | ADJUST_DEFAULT | ADJUST_SESSIONID). */
  openProcessToken(): Win32Handle;
  /** GetTokenInformation(TokenGroups): the SID of the group marked SE_GROUP_LOGON_ID, if any. */
  getLogonSid(token: Win32Handle): string | undefined;
  /** CreateRestrictedToken(token, flags, restricting SIDs via ConvertStringSidToSidW). */
  createRestrictedToken(token: Win32Handle, flags: number, restrictingSids: readonly string[]): Win32Handle;
  /** SetTokenInformation(TokenDefaultDacl): objects the child creates grant GENERIC_ALL to these SIDs. */
  setTokenDefaultDacl(token: Win32Handle, sids: readonly string[]): void;
  /** GetNamedSecurityInfoW + GetAce: whether an explicit ACE with this SID, type, flags and at least this mask exists. */
  hasExplicitAce(ace: ResolvedAce): boolean;
  /** GetNamedSecurityInfoW + SetEntriesInAclW + SetNamedSecurityInfoW (inheritance propagates to children). */
  addAce(ace: ResolvedAce): void;
  /** GetNamedSecurityInfoW + DeleteAce of exactly this explicit ACE + SetNamedSecurityInfoW. */
  removeAce(ace: ResolvedAce): void;
  /** CreateJobObjectW. */
  createJobObject(): Win32Handle;
  /** SetInformationJobObject(JobObjectExtendedLimitInformation, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE). */
  setKillOnJobClose(job: Win32Handle): void;
  /** CreateProcessAsUserW(token, CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT | EXTENDED_STARTUPINFO_PRESENT). */
  createProcessAsUser(token: Win32Handle, options: CreateProcessOptions): CreatedProcess;
  assignProcessToJobObject(job: Win32Handle, process: Win32Handle): void;
  resumeThread(thread: Win32Handle): void;
  terminateProcess(process: Win32Handle, exitCode: number): void;
  terminateJobObject(job: Win32Handle, exitCode: number): void;
  /** WaitForSingleObject(INFINITE) off the event loop, then GetExitCodeProcess. */
  waitForExit(process: Win32Handle): Promise<number>;
  closeHandle(handle: Win32Handle): void;
}
