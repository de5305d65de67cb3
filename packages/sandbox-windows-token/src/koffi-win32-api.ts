import { SandboxUnavailableError } from '@ux/protocol/core';
import type koffiModule from 'koffi';
import { CONTAINER_INHERIT_ACE, INHERITED_ACE, OBJECT_INHERIT_ACE } from './win32-access.js';
import { type ResolvedAce, type Win32Api, Win32CallError, type Win32Handle } from './win32-api.js';
import { declareWin32Types, WIN32_FUNCTIONS, type Win32FunctionName } from './win32-declarations.js';

type Koffi = typeof koffiModule;
type Pointer = bigint | null;
// biome-ignore lint/suspicious/noExplicitAny: koffi functions take and return untyped native values.
type NativeFunction = ((...args: any[]) => any) & { async: (...args: any[]) => void };

const TOKEN_ACCESS = 0x0001 | 0x0002 | 0x0008 | 0x0020 | 0x0080 | 0x0100; // ASSIGN_PRIMARY, DUPLICATE, QUERY, ADJUST_PRIVILEGES, ADJUST_DEFAULT, ADJUST_SESSIONID
const TOKEN_GROUPS = 2;
const TOKEN_DEFAULT_DACL = 6;
const TOKEN_LINKED_TOKEN = 19;
const SE_GROUP_LOGON_ID = 0xc000_0000;
const SE_FILE_OBJECT = 1;
const DACL_SECURITY_INFORMATION = 0x4;
const GRANT_ACCESS = 1;
const DENY_ACCESS = 3;
const TRUSTEE_IS_SID = 0;
const GENERIC_ALL = 0x1000_0000;
const ACL_SIZE_INFORMATION_CLASS = 2;
const ACCESS_ALLOWED_ACE_TYPE = 0;
const ACCESS_DENIED_ACE_TYPE = 1;
const JOB_OBJECT_EXTENDED_LIMIT_INFORMATION = 9;
const JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000;
const CREATE_SUSPENDED = 0x4;
const CREATE_UNICODE_ENVIRONMENT = 0x400;
const EXTENDED_STARTUPINFO_PRESENT = 0x8_0000;
const STARTF_USESTDHANDLES = 0x100;
const HANDLE_FLAG_INHERIT = 0x1;
const PROC_THREAD_ATTRIBUTE_HANDLE_LIST = 0x2_0002;
const STD_HANDLES = [0xffff_fff6, 0xffff_fff5, 0xffff_fff4]; // STD_INPUT, STD_OUTPUT, STD_ERROR (-10, -11, -12)
const INVALID_HANDLE_VALUE = 0xffff_ffff_ffff_ffffn;
const INFINITE = 0xffff_ffff;
const WAIT_FAILED = 0xffff_ffff;
const ERROR_INSUFFICIENT_BUFFER = 122;

/**
 * The real Win32 surface: advapi32 and kernel32 bound with koffi, loaded on first use and only on Windows
 * (importing this module loads nothing). Rejects with `SandboxUnavailableError` elsewhere or when koffi or
 * a DLL cannot be loaded.
 */
export async function loadKoffiWin32Api(platform: NodeJS.Platform = process.platform): Promise<Win32Api> {
  if (platform !== 'win32') {
    throw new SandboxUnavailableError({
      backend: 'windows-token',
      reason: `not on this platform (the launcher calls the Win32 API; this is ${platform})`,
      fix: 'run the launcher on Windows',
    });
  }
  let koffi: Koffi;
  try {
    koffi = (await import('koffi')).default;
  } catch (error) {
    throw new SandboxUnavailableError(
      {
        backend: 'windows-token',
        reason: `koffi could not be loaded: ${String(error)}`,
        fix: 'reinstall @ux/sandbox-windows-token so koffi installs its Windows binary',
      },
      { cause: error },
    );
  }
  return bindWin32Api(koffi);
}

function bindWin32Api(koffi: Koffi): Win32Api {
  declareWin32Types(koffi);
  const libraries = new Map<string, ReturnType<Koffi['load']>>();
  const fns = {} as Record<Win32FunctionName, NativeFunction>;
  for (const [name, [dll, prototype]] of Object.entries(WIN32_FUNCTIONS) as [
    Win32FunctionName,
    readonly [string, string],
  ][]) {
    let library = libraries.get(dll);
    if (!library) {
      library = koffi.load(dll);
      libraries.set(dll, library);
    }
    fns[name] = library.func(prototype) as NativeFunction;
  }
  const lastError = () => fns.GetLastError() as number;
  /** Calls a BOOL function; throws with GetLastError when it returns FALSE. */
  const check = (name: Win32FunctionName, ...args: unknown[]) => {
    const result = fns[name](...args);
    if (!result) throw new Win32CallError(name, lastError());
    return result;
  };
  /** Calls a function that returns a Win32 error code (ERROR_SUCCESS is 0). */
  const checkCode = (name: Win32FunctionName, ...args: unknown[]) => {
    const code = fns[name](...args) as number;
    if (code !== 0) throw new Win32CallError(name, code);
  };
  const free = (pointer: Pointer) => {
    if (pointer) fns.LocalFree(pointer);
  };
  const withSids = <T>(sids: readonly string[], body: (pointers: bigint[]) => T): T => {
    const pointers: bigint[] = [];
    try {
      for (const sid of sids) {
        const out: Pointer[] = [null];
        check('ConvertStringSidToSidW', sid, out);
        pointers.push(out[0]!);
      }
      return body(pointers);
    } finally {
      for (const pointer of pointers) free(pointer);
    }
  };
  const sidToString = (sid: bigint): string => {
    const out: Pointer[] = [null];
    check('ConvertSidToStringSidW', sid, out);
    try {
      return koffi.decode.string16(out[0]);
    } finally {
      free(out[0]!);
    }
  };
  const tokenInformation = (token: Win32Handle, infoClass: number): Buffer => {
    const length = [0];
    if (
      !fns.GetTokenInformation(token, infoClass, null, 0, length) &&
      lastError() !== ERROR_INSUFFICIENT_BUFFER
    ) {
      throw new Win32CallError('GetTokenInformation', lastError());
    }
    const buffer = Buffer.alloc(length[0]!);
    check('GetTokenInformation', token, infoClass, buffer, buffer.length, length);
    return buffer;
  };
  const logonSidOf = (token: Win32Handle): string | undefined => {
    // TOKEN_GROUPS: a DWORD count, then SID_AND_ATTRIBUTES entries (16 bytes each) from offset 8.
    const groups = tokenInformation(token, TOKEN_GROUPS);
    const count = groups.readUInt32LE(0);
    for (let i = 0; i < count; i++) {
      const attributes = groups.readUInt32LE(8 + i * 16 + 8);
      if ((attributes & SE_GROUP_LOGON_ID) >>> 0 === SE_GROUP_LOGON_ID) {
        return sidToString(groups.readBigUInt64LE(8 + i * 16));
      }
    }
    return undefined;
  };
  /** Replaces an object's DACL. */
  const setDacl = (path: string, dacl: Pointer | undefined) =>
    checkCode(
      'SetNamedSecurityInfoW',
      path,
      SE_FILE_OBJECT,
      DACL_SECURITY_INFORMATION,
      null,
      null,
      dacl,
      null,
    );
  /** Runs `body` with an object's DACL (owned by a security descriptor freed afterwards). */
  const withDacl = <T>(path: string, body: (dacl: bigint) => T): T => {
    const dacl: Pointer[] = [null];
    const descriptor: Pointer[] = [null];
    checkCode(
      'GetNamedSecurityInfoW',
      path,
      SE_FILE_OBJECT,
      DACL_SECURITY_INFORMATION,
      null,
      null,
      dacl,
      null,
      descriptor,
    );
    try {
      // A NULL DACL grants everyone everything; replacing it with one entry would lock everyone else out.
      if (!dacl[0])
        throw new Win32CallError('GetNamedSecurityInfoW', 0, `${path} has a NULL DACL; ux leaves it alone`);
      return body(dacl[0]);
    } finally {
      free(descriptor[0]!);
    }
  };
  /** The index of the explicit ACE matching `ace` (exact mask when `exact`, at least the mask otherwise), or -1. */
  const findAce = (dacl: bigint, ace: ResolvedAce, sid: bigint, exact: boolean): number => {
    const info: { AceCount?: number } = {};
    check('GetAclInformation', dacl, info, koffi.sizeof('ACL_SIZE_INFORMATION'), ACL_SIZE_INFORMATION_CLASS);
    const wantedType = ace.type === 'allow' ? ACCESS_ALLOWED_ACE_TYPE : ACCESS_DENIED_ACE_TYPE;
    for (let i = 0; i < (info.AceCount ?? 0); i++) {
      const out: Pointer[] = [null];
      check('GetAce', dacl, i, out);
      const pointer = BigInt(out[0]!);
      const prefix = koffi.decode(pointer, 'ACE_PREFIX') as {
        Header: { AceType: number; AceFlags: number };
        Mask: number;
      };
      if (prefix.Header.AceType !== wantedType || (prefix.Header.AceFlags & INHERITED_ACE) !== 0) continue;
      if ((prefix.Header.AceFlags & (CONTAINER_INHERIT_ACE | OBJECT_INHERIT_ACE)) !== ace.flags) continue;
      const mask = prefix.Mask >>> 0;
      if (exact ? mask !== ace.mask >>> 0 : (mask & ace.mask) >>> 0 !== ace.mask >>> 0) continue;
      if (fns.EqualSid(pointer + 8n, sid)) return i;
    }
    return -1;
  };
  const explicitAccess = (sid: bigint, mask: number, mode: number, inheritance: number) => ({
    grfAccessPermissions: mask >>> 0,
    grfAccessMode: mode,
    grfInheritance: inheritance,
    Trustee: {
      pMultipleTrustee: null,
      MultipleTrusteeOperation: 0,
      TrusteeForm: TRUSTEE_IS_SID,
      TrusteeType: 0,
      ptstrName: sid,
    },
  });

  return {
    openProcessToken() {
      const out: Pointer[] = [null];
      check('OpenProcessToken', fns.GetCurrentProcess(), TOKEN_ACCESS, out);
      return out[0]!;
    },
    getLogonSid(token) {
      const own = logonSidOf(token);
      if (own !== undefined) return own;
      // A filtered admin token may keep its logon SID only on the linked (elevated) token.
      let linked: Buffer;
      try {
        linked = tokenInformation(token, TOKEN_LINKED_TOKEN);
      } catch {
        return undefined;
      }
      const handle = linked.readBigUInt64LE(0);
      try {
        return logonSidOf(handle);
      } finally {
        fns.CloseHandle(handle);
      }
    },
    createRestrictedToken(token, flags, restrictingSids) {
      return withSids(restrictingSids, (sids) => {
        const out: Pointer[] = [null];
        const restrict = sids.map((Sid) => ({ Sid, Attributes: 0 }));
        check('CreateRestrictedToken', token, flags, 0, null, 0, null, restrict.length, restrict, out);
        return out[0]!;
      });
    },
    setTokenDefaultDacl(token, sids) {
      withSids(sids, (pointers) => {
        const out: Pointer[] = [null];
        const entries = pointers.map((sid) => explicitAccess(sid, GENERIC_ALL, GRANT_ACCESS, 0));
        checkCode('SetEntriesInAclW', entries.length, entries, null, out);
        try {
          check(
            'SetTokenInformation',
            token,
            TOKEN_DEFAULT_DACL,
            { DefaultDacl: out[0] },
            koffi.sizeof('TOKEN_DEFAULT_DACL'),
          );
        } finally {
          free(out[0]!);
        }
      });
    },
    hasExplicitAce(ace) {
      return withSids([ace.sid], ([sid]) =>
        withDacl(ace.path, (dacl) => findAce(dacl, ace, sid!, false) !== -1),
      );
    },
    addAce(ace) {
      withSids([ace.sid], ([sid]) =>
        withDacl(ace.path, (dacl) => {
          const out: Pointer[] = [null];
          const entry = explicitAccess(
            sid!,
            ace.mask,
            ace.type === 'allow' ? GRANT_ACCESS : DENY_ACCESS,
            ace.flags,
          );
          checkCode('SetEntriesInAclW', 1, [entry], dacl, out);
          try {
            setDacl(ace.path, out[0]);
          } finally {
            free(out[0]!);
          }
        }),
      );
    },
    removeAce(ace) {
      withSids([ace.sid], ([sid]) =>
        withDacl(ace.path, (dacl) => {
          const index = findAce(dacl, ace, sid!, true);
          if (index === -1) return;
          check('DeleteAce', dacl, index);
          setDacl(ace.path, dacl);
        }),
      );
    },
    createJobObject() {
      const job = fns.CreateJobObjectW(null, null) as Pointer;
      if (!job) throw new Win32CallError('CreateJobObjectW', lastError());
      return job;
    },
    setKillOnJobClose(job) {
      const info = {
        BasicLimitInformation: {
          PerProcessUserTimeLimit: 0,
          PerJobUserTimeLimit: 0,
          LimitFlags: JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
          MinimumWorkingSetSize: 0,
          MaximumWorkingSetSize: 0,
          ActiveProcessLimit: 0,
          Affinity: 0,
          PriorityClass: 0,
          SchedulingClass: 0,
        },
        IoInfo: {
          ReadOperationCount: 0,
          WriteOperationCount: 0,
          OtherOperationCount: 0,
          ReadTransferCount: 0,
          WriteTransferCount: 0,
          OtherTransferCount: 0,
        },
        ProcessMemoryLimit: 0,
        JobMemoryLimit: 0,
        PeakProcessMemoryUsed: 0,
        PeakJobMemoryUsed: 0,
      };
      check(
        'SetInformationJobObject',
        job,
        JOB_OBJECT_EXTENDED_LIMIT_INFORMATION,
        info,
        koffi.sizeof('JOBOBJECT_EXTENDED_LIMIT_INFORMATION'),
      );
    },
    createProcessAsUser(token, options) {
      const commandLine = Buffer.from(`${options.commandLine}\0`, 'utf16le');
      const environment = environmentBlock(options.env);
      const startup = {
        StartupInfo: { cb: koffi.sizeof('STARTUPINFOW'), dwFlags: 0 } as Record<string, unknown>,
        lpAttributeList: null as Buffer | null,
      };
      let flags = CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT;
      let inherit = 0;
      if (options.inheritStdio) {
        const handles = [...new Set(STD_HANDLES.map((which) => fns.GetStdHandle(which) as Pointer))].filter(
          (handle): handle is bigint => !!handle && BigInt(handle) !== INVALID_HANDLE_VALUE,
        );
        if (handles.length > 0) {
          for (const handle of handles)
            check('SetHandleInformation', handle, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT);
          // Only the standard handles are inherited, never whatever else the launcher holds open.
          const size = [0];
          fns.InitializeProcThreadAttributeList(null, 1, 0, size);
          const list = Buffer.alloc(size[0]!);
          check('InitializeProcThreadAttributeList', list, 1, 0, size);
          const values = Buffer.alloc(handles.length * 8);
          for (const [i, handle] of handles.entries()) values.writeBigUInt64LE(BigInt(handle), i * 8);
          check(
            'UpdateProcThreadAttribute',
            list,
            0,
            PROC_THREAD_ATTRIBUTE_HANDLE_LIST,
            values,
            values.length,
            null,
            null,
          );
          startup.lpAttributeList = list;
          startup.StartupInfo = {
            cb: koffi.sizeof('STARTUPINFOEXW'),
            dwFlags: STARTF_USESTDHANDLES,
            hStdInput: fns.GetStdHandle(STD_HANDLES[0]),
            hStdOutput: fns.GetStdHandle(STD_HANDLES[1]),
            hStdError: fns.GetStdHandle(STD_HANDLES[2]),
          };
          flags |= EXTENDED_STARTUPINFO_PRESENT;
          inherit = 1;
        }
      }
      const info: { hProcess?: bigint; hThread?: bigint; dwProcessId?: number } = {};
      try {
        check(
          'CreateProcessAsUserW',
          token,
          null,
          commandLine,
          null,
          null,
          inherit,
          flags,
          environment,
          options.cwd,
          startup,
          info,
        );
      } finally {
        if (startup.lpAttributeList) fns.DeleteProcThreadAttributeList(startup.lpAttributeList);
      }
      return { process: info.hProcess!, thread: info.hThread!, pid: info.dwProcessId! };
    },
    assignProcessToJobObject(job, process) {
      check('AssignProcessToJobObject', job, process);
    },
    resumeThread(thread) {
      if ((fns.ResumeThread(thread) as number) === 0xffff_ffff)
        throw new Win32CallError('ResumeThread', lastError());
    },
    terminateProcess(process, exitCode) {
      check('TerminateProcess', process, exitCode);
    },
    terminateJobObject(job, exitCode) {
      check('TerminateJobObject', job, exitCode);
    },
    waitForExit(process) {
      // On a worker thread, so signal handlers keep running while the command does.
      return new Promise((resolve, reject) => {
        fns.WaitForSingleObject.async(process, INFINITE, (error: unknown, result: number) => {
          if (error) return reject(error);
          if (result === WAIT_FAILED) return reject(new Win32CallError('WaitForSingleObject', lastError()));
          try {
            const code = [0];
            check('GetExitCodeProcess', process, code);
            resolve(code[0]!);
          } catch (failure) {
            reject(failure);
          }
        });
      });
    },
    closeHandle(handle) {
      check('CloseHandle', handle);
    },
  };
}

/** A CREATE_UNICODE_ENVIRONMENT block: `NAME=value\0` sorted case-insensitively, then a final `\0`. */
export function environmentBlock(env: Readonly<Record<string, string>>): Buffer {
  const entries = Object.entries(env)
    .filter(([name]) => name !== '' && !name.includes('='))
    .sort(([a], [b]) => (a.toUpperCase() < b.toUpperCase() ? -1 : a.toUpperCase() > b.toUpperCase() ? 1 : 0));
  const text = entries.map(([name, value]) => `${name}=${value}\0`).join('');
  return Buffer.from(`${text === '' ? '\0' : text}\0`, 'utf16le');
}
