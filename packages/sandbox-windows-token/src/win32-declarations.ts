import type koffiModule from 'koffi';

type Koffi = typeof koffiModule;

/** Which DLL exports a function, and its C prototype as koffi reads it. BOOL is `int`, as in windef.h. */
export const WIN32_FUNCTIONS = {
  OpenProcessToken: [
    'advapi32.dll',
    'int __stdcall OpenProcessToken(void *process, uint32_t access, _Out_ void **token)',
  ],
  GetTokenInformation: [
    'advapi32.dll',
    'int __stdcall GetTokenInformation(void *token, int infoClass, _Out_ uint8_t *info, uint32_t length, _Out_ uint32_t *returnLength)',
  ],
  SetTokenInformation: [
    'advapi32.dll',
    'int __stdcall SetTokenInformation(void *token, int infoClass, TOKEN_DEFAULT_DACL *info, uint32_t length)',
  ],
  ConvertStringSidToSidW: [
    'advapi32.dll',
    'int __stdcall ConvertStringSidToSidW(const char16_t *text, _Out_ void **sid)',
  ],
  ConvertSidToStringSidW: [
    'advapi32.dll',
    'int __stdcall ConvertSidToStringSidW(void *sid, _Out_ void **text)',
  ],
  EqualSid: ['advapi32.dll', 'int __stdcall EqualSid(void *a, void *b)'],
  CreateRestrictedToken: [
    'advapi32.dll',
    'int __stdcall CreateRestrictedToken(void *token, uint32_t flags, uint32_t disableCount, void *disable, uint32_t deletePrivilegeCount, void *deletePrivileges, uint32_t restrictCount, SID_AND_ATTRIBUTES *restrict, _Out_ void **newToken)',
  ],
  GetNamedSecurityInfoW: [
    'advapi32.dll',
    'uint32_t __stdcall GetNamedSecurityInfoW(const char16_t *name, int objectType, uint32_t info, void *owner, void *group, _Out_ void **dacl, void *sacl, _Out_ void **descriptor)',
  ],
  SetNamedSecurityInfoW: [
    'advapi32.dll',
    'uint32_t __stdcall SetNamedSecurityInfoW(const char16_t *name, int objectType, uint32_t info, void *owner, void *group, void *dacl, void *sacl)',
  ],
  SetEntriesInAclW: [
    'advapi32.dll',
    'uint32_t __stdcall SetEntriesInAclW(uint32_t count, EXPLICIT_ACCESS_W *entries, void *oldAcl, _Out_ void **newAcl)',
  ],
  GetAclInformation: [
    'advapi32.dll',
    'int __stdcall GetAclInformation(void *acl, _Out_ ACL_SIZE_INFORMATION *info, uint32_t length, int infoClass)',
  ],
  GetAce: ['advapi32.dll', 'int __stdcall GetAce(void *acl, uint32_t index, _Out_ void **ace)'],
  DeleteAce: ['advapi32.dll', 'int __stdcall DeleteAce(void *acl, uint32_t index)'],
  CreateProcessAsUserW: [
    'advapi32.dll',
    'int __stdcall CreateProcessAsUserW(void *token, const char16_t *application, uint8_t *commandLine, void *processAttributes, void *threadAttributes, int inheritHandles, uint32_t flags, uint8_t *environment, const char16_t *cwd, STARTUPINFOEXW *startup, _Out_ PROCESS_INFORMATION *info)',
  ],
  GetCurrentProcess: ['kernel32.dll', 'void *__stdcall GetCurrentProcess()'],
  GetLastError: ['kernel32.dll', 'uint32_t __stdcall GetLastError()'],
  LocalFree: ['kernel32.dll', 'void *__stdcall LocalFree(void *memory)'],
  CloseHandle: ['kernel32.dll', 'int __stdcall CloseHandle(void *handle)'],
  CreateJobObjectW: [
    'kernel32.dll',
    'void *__stdcall CreateJobObjectW(void *attributes, const char16_t *name)',
  ],
  SetInformationJobObject: [
    'kernel32.dll',
    'int __stdcall SetInformationJobObject(void *job, int infoClass, JOBOBJECT_EXTENDED_LIMIT_INFORMATION *info, uint32_t length)',
  ],
  AssignProcessToJobObject: [
    'kernel32.dll',
    'int __stdcall AssignProcessToJobObject(void *job, void *process)',
  ],
  TerminateJobObject: ['kernel32.dll', 'int __stdcall TerminateJobObject(void *job, uint32_t exitCode)'],
  TerminateProcess: ['kernel32.dll', 'int __stdcall TerminateProcess(void *process, uint32_t exitCode)'],
  ResumeThread: ['kernel32.dll', 'uint32_t __stdcall ResumeThread(void *thread)'],
  WaitForSingleObject: [
    'kernel32.dll',
    'uint32_t __stdcall WaitForSingleObject(void *handle, uint32_t milliseconds)',
  ],
  GetExitCodeProcess: [
    'kernel32.dll',
    'int __stdcall GetExitCodeProcess(void *process, _Out_ uint32_t *exitCode)',
  ],
  GetStdHandle: ['kernel32.dll', 'void *__stdcall GetStdHandle(uint32_t which)'],
  SetHandleInformation: [
    'kernel32.dll',
    'int __stdcall SetHandleInformation(void *handle, uint32_t mask, uint32_t flags)',
  ],
  InitializeProcThreadAttributeList: [
    'kernel32.dll',
    'int __stdcall InitializeProcThreadAttributeList(void *list, uint32_t count, uint32_t flags, _Inout_ size_t *size)',
  ],
  UpdateProcThreadAttribute: [
    'kernel32.dll',
    'int __stdcall UpdateProcThreadAttribute(void *list, uint32_t flags, uintptr_t attribute, void *value, size_t size, void *previous, void *returnSize)',
  ],
  DeleteProcThreadAttributeList: ['kernel32.dll', 'void __stdcall DeleteProcThreadAttributeList(void *list)'],
} as const;

export type Win32FunctionName = keyof typeof WIN32_FUNCTIONS;

let declared = false;

/**
 * Declares the Win32 structures the prototypes use, with Win64 layouts (koffi registers type names once
 * per process, so this is idempotent). Declaring works on any OS; only loading the DLLs needs Windows.
 */
export function declareWin32Types(koffi: Koffi): void {
  if (declared) return;
  declared = true;
  koffi.struct('SID_AND_ATTRIBUTES', { Sid: 'void *', Attributes: 'uint32_t' });
  koffi.struct('TRUSTEE_W', {
    pMultipleTrustee: 'void *',
    MultipleTrusteeOperation: 'int',
    TrusteeForm: 'int',
    TrusteeType: 'int',
    ptstrName: 'void *',
  });
  koffi.struct('EXPLICIT_ACCESS_W', {
    grfAccessPermissions: 'uint32_t',
    grfAccessMode: 'int',
    grfInheritance: 'uint32_t',
    Trustee: 'TRUSTEE_W',
  });
  koffi.struct('ACE_HEADER', { AceType: 'uint8_t', AceFlags: 'uint8_t', AceSize: 'uint16_t' });
  // ACCESS_ALLOWED_ACE and ACCESS_DENIED_ACE up to their SID, which starts at offset 8.
  koffi.struct('ACE_PREFIX', { Header: 'ACE_HEADER', Mask: 'uint32_t' });
  koffi.struct('ACL_SIZE_INFORMATION', {
    AceCount: 'uint32_t',
    AclBytesInUse: 'uint32_t',
    AclBytesFree: 'uint32_t',
  });
  koffi.struct('TOKEN_DEFAULT_DACL', { DefaultDacl: 'void *' });
  koffi.struct('STARTUPINFOW', {
    cb: 'uint32_t',
    lpReserved: 'void *',
    lpDesktop: 'void *',
    lpTitle: 'void *',
    dwX: 'uint32_t',
    dwY: 'uint32_t',
    dwXSize: 'uint32_t',
    dwYSize: 'uint32_t',
    dwXCountChars: 'uint32_t',
    dwYCountChars: 'uint32_t',
    dwFillAttribute: 'uint32_t',
    dwFlags: 'uint32_t',
    wShowWindow: 'uint16_t',
    cbReserved2: 'uint16_t',
    lpReserved2: 'void *',
    hStdInput: 'void *',
    hStdOutput: 'void *',
    hStdError: 'void *',
  });
  koffi.struct('STARTUPINFOEXW', { StartupInfo: 'STARTUPINFOW', lpAttributeList: 'void *' });
  koffi.struct('PROCESS_INFORMATION', {
    hProcess: 'void *',
    hThread: 'void *',
    dwProcessId: 'uint32_t',
    dwThreadId: 'uint32_t',
  });
  koffi.struct('JOBOBJECT_BASIC_LIMIT_INFORMATION', {
    PerProcessUserTimeLimit: 'int64_t',
    PerJobUserTimeLimit: 'int64_t',
    LimitFlags: 'uint32_t',
    MinimumWorkingSetSize: 'size_t',
    MaximumWorkingSetSize: 'size_t',
    ActiveProcessLimit: 'uint32_t',
    Affinity: 'uintptr_t',
    PriorityClass: 'uint32_t',
    SchedulingClass: 'uint32_t',
  });
  koffi.struct('IO_COUNTERS', {
    ReadOperationCount: 'uint64_t',
    WriteOperationCount: 'uint64_t',
    OtherOperationCount: 'uint64_t',
    ReadTransferCount: 'uint64_t',
    WriteTransferCount: 'uint64_t',
    OtherTransferCount: 'uint64_t',
  });
  koffi.struct('JOBOBJECT_EXTENDED_LIMIT_INFORMATION', {
    BasicLimitInformation: 'JOBOBJECT_BASIC_LIMIT_INFORMATION',
    IoInfo: 'IO_COUNTERS',
    ProcessMemoryLimit: 'size_t',
    JobMemoryLimit: 'size_t',
    PeakProcessMemoryUsed: 'size_t',
    PeakJobMemoryUsed: 'size_t',
  });
}
