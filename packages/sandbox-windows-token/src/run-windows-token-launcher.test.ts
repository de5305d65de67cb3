import { describe, expect, it } from 'vitest';
import type { WindowsTokenLaunchSpec } from './launch-spec.js';
import {
  LAUNCHER_FAILURE_EXIT_CODE,
  type LauncherHost,
  runWindowsTokenLauncher,
} from './run-windows-token-launcher.js';
import { type ResolvedAce, type Win32Api, Win32CallError } from './win32-api.js';

const CAP = 'S-1-15-3-1024-1-1-1-1-1-1-1-1';
const RUN = 'S-1-15-3-1024-9-9-9-9-9-9-9-9';
const LOGON = 'S-1-5-5-0-123456';

const spec: WindowsTokenLaunchSpec = {
  version: 1,
  sandboxId: 'default',
  capabilitySid: CAP,
  token: { flags: 13, restrictingSids: [CAP, '<run>', '<logon>', 'S-1-1-0'] },
  aces: [
    {
      path: 'C:\\w',
      trustee: 'capability',
      type: 'allow',
      mask: 0x1301ff,
      flags: 3,
      undo: 'never',
      why: 'writable root',
    },
    {
      path: 'C:\\tmp',
      trustee: 'run',
      type: 'allow',
      mask: 0x1301ff,
      flags: 3,
      undo: 'after-run',
      why: 'writable root',
    },
    {
      path: 'C:\\w\\.git\\hooks',
      trustee: 'run',
      type: 'deny',
      mask: 0xd0156,
      flags: 3,
      undo: 'after-run',
      why: 'hooks',
    },
    {
      path: 'C:\\w\\.git',
      trustee: 'run',
      type: 'deny',
      mask: 0x10040,
      flags: 0,
      undo: 'after-run',
      why: 'parent',
    },
  ],
  tty: false,
};

const short = (ace: ResolvedAce) =>
  `${ace.type} ${ace.sid === CAP ? 'cap' : ace.sid === RUN ? 'run' : ace.sid} ${ace.path}`;

/** Records every Win32 call in order; `failAt` makes the named call throw ERROR_ACCESS_DENIED. */
function recordingApi(
  options: { failAt?: string; failOnCall?: number; present?: string[]; exitCode?: number } = {},
) {
  const calls: string[] = [];
  let callCounts: Record<string, number> = {};
  const step = <T = void>(name: string, detail = '', result?: T): T => {
    calls.push(detail ? `${name} ${detail}` : name);
    callCounts = { ...callCounts, [name]: (callCounts[name] ?? 0) + 1 };
    if (options.failAt === name && (options.failOnCall ?? 1) === callCounts[name])
      throw new Win32CallError(name, 5);
    return result as T;
  };
  let exit: (code: number) => void = () => {};
  const api: Win32Api = {
    openProcessToken: () => step('OpenProcessToken', '', 'base'),
    getLogonSid: (token) => step('GetTokenInformation(TokenGroups)', String(token), LOGON),
    createRestrictedToken: (token, flags, sids) =>
      step('CreateRestrictedToken', `${token} 0x${flags.toString(16)} ${sids.join(',')}`, 'restricted'),
    setTokenDefaultDacl: (token, sids) =>
      step('SetTokenInformation(TokenDefaultDacl)', `${token} ${sids.join(',')}`),
    hasExplicitAce: (ace) =>
      step('GetNamedSecurityInfoW', short(ace), options.present?.includes(ace.path) ?? false),
    addAce: (ace) =>
      step(
        'SetEntriesInAclW+SetNamedSecurityInfoW',
        `${short(ace)} 0x${ace.mask.toString(16)} flags=${ace.flags}`,
      ),
    removeAce: (ace) => step('DeleteAce+SetNamedSecurityInfoW', short(ace)),
    createJobObject: () => step('CreateJobObjectW', '', 'job'),
    setKillOnJobClose: (job) => step('SetInformationJobObject(KILL_ON_JOB_CLOSE)', String(job)),
    createProcessAsUser: (token, o) =>
      step(
        'CreateProcessAsUserW',
        `${token} ${JSON.stringify(o.commandLine)} cwd=${o.cwd} stdio=${o.inheritStdio} env=${Object.keys(o.env).join(',')}`,
        { process: 'process', thread: 'thread', pid: 4242 },
      ),
    assignProcessToJobObject: (job, process) => step('AssignProcessToJobObject', `${job} ${process}`),
    resumeThread: (thread) => step('ResumeThread', String(thread)),
    terminateProcess: (process, code) => step('TerminateProcess', `${process} ${code}`),
    terminateJobObject: (job, code) => step('TerminateJobObject', `${job} ${code}`),
    waitForExit: (process) => {
      step('WaitForSingleObject+GetExitCodeProcess', String(process));
      return options.exitCode === undefined
        ? new Promise((resolve) => (exit = resolve))
        : Promise.resolve(options.exitCode);
    },
    closeHandle: (handle) => step('CloseHandle', String(handle)),
  };
  return { api, calls, exit: (code: number) => exit(code) };
}

function host() {
  const errors: string[] = [];
  let terminate: (() => void) | undefined;
  let listening = false;
  const value: LauncherHost = {
    env: { Path: 'C:\\Windows', UX_SANDBOX: 'windows-token' },
    cwd: 'C:\\w',
    newRunSid: () => RUN,
    writeError: (text) => errors.push(text),
    onTerminate: (handler) => {
      terminate = handler;
      listening = true;
      return () => {
        listening = false;
      };
    },
  };
  return { value, errors, terminate: () => terminate?.(), listening: () => listening };
}

const SETUP = [
  'OpenProcessToken',
  'GetTokenInformation(TokenGroups) base',
  `CreateRestrictedToken base 0xd ${CAP},${RUN},${LOGON},S-1-1-0`,
  `SetTokenInformation(TokenDefaultDacl) restricted ${LOGON},${CAP},${RUN},S-1-5-18`,
  'GetNamedSecurityInfoW allow cap C:\\w',
  'SetEntriesInAclW+SetNamedSecurityInfoW allow cap C:\\w 0x1301ff flags=3',
  'SetEntriesInAclW+SetNamedSecurityInfoW allow run C:\\tmp 0x1301ff flags=3',
  'SetEntriesInAclW+SetNamedSecurityInfoW deny run C:\\w\\.git\\hooks 0xd0156 flags=3',
  'SetEntriesInAclW+SetNamedSecurityInfoW deny run C:\\w\\.git 0x10040 flags=0',
];
const UNDO = [
  'DeleteAce+SetNamedSecurityInfoW deny run C:\\w\\.git',
  'DeleteAce+SetNamedSecurityInfoW deny run C:\\w\\.git\\hooks',
  'DeleteAce+SetNamedSecurityInfoW allow run C:\\tmp',
];

describe('runWindowsTokenLauncher', () => {
  it('restricts, applies the ACEs, starts suspended in a kill-on-close job, resumes, then closes and undoes', async () => {
    const { api, calls } = recordingApi({ exitCode: 3 });
    const h = host();
    const code = await runWindowsTokenLauncher(spec, ['cmd.exe', '/c', 'echo hi'], api, h.value);
    expect(code).toBe(3);
    expect(calls).toEqual([
      ...SETUP,
      'CreateJobObjectW',
      'SetInformationJobObject(KILL_ON_JOB_CLOSE) job',
      'CreateProcessAsUserW restricted "cmd.exe /c \\"echo hi\\"" cwd=C:\\w stdio=true env=Path,UX_SANDBOX',
      'AssignProcessToJobObject job process',
      'ResumeThread thread',
      'WaitForSingleObject+GetExitCodeProcess process',
      'CloseHandle job',
      ...UNDO,
      'CloseHandle process',
      'CloseHandle thread',
      'CloseHandle restricted',
      'CloseHandle base',
    ]);
    expect(h.errors).toEqual([]);
    expect(h.listening()).toBe(false);
  });

  it('reuses a grant an earlier run left and never removes it', async () => {
    const { api, calls } = recordingApi({ exitCode: 0, present: ['C:\\w'] });
    await runWindowsTokenLauncher(spec, ['x.exe'], api, host().value);
    expect(calls.filter((call) => call.includes('allow cap'))).toEqual([
      'GetNamedSecurityInfoW allow cap C:\\w',
    ]);
    expect(calls.some((call) => call.startsWith('DeleteAce') && call.includes('cap'))).toBe(false);
  });

  it('undoes the ACEs it added when a later ACE fails, and starts nothing', async () => {
    const { api, calls } = recordingApi({ failAt: 'SetEntriesInAclW+SetNamedSecurityInfoW', failOnCall: 3 });
    const h = host();
    const code = await runWindowsTokenLauncher(spec, ['x.exe'], api, h.value);
    expect(code).toBe(LAUNCHER_FAILURE_EXIT_CODE);
    expect(calls.slice(SETUP.length - 2)).toEqual([
      'SetEntriesInAclW+SetNamedSecurityInfoW deny run C:\\w\\.git\\hooks 0xd0156 flags=3',
      'DeleteAce+SetNamedSecurityInfoW allow run C:\\tmp',
      'CloseHandle restricted',
      'CloseHandle base',
    ]);
    expect(calls.some((call) => call.startsWith('CreateProcessAsUserW'))).toBe(false);
    expect(h.errors).toEqual([
      'ux-windows-token: SetEntriesInAclW+SetNamedSecurityInfoW failed with Win32 error 5 (ERROR_ACCESS_DENIED)\n',
    ]);
  });

  it('kills the suspended child and undoes everything when it cannot join the job', async () => {
    const { api, calls } = recordingApi({ failAt: 'AssignProcessToJobObject' });
    const code = await runWindowsTokenLauncher(spec, ['x.exe'], api, host().value);
    expect(code).toBe(LAUNCHER_FAILURE_EXIT_CODE);
    expect(calls.slice(SETUP.length + 3)).toEqual([
      'AssignProcessToJobObject job process',
      `TerminateProcess process ${LAUNCHER_FAILURE_EXIT_CODE}`,
      'CloseHandle job',
      ...UNDO,
      'CloseHandle process',
      'CloseHandle thread',
      'CloseHandle restricted',
      'CloseHandle base',
    ]);
    expect(calls).not.toContain('ResumeThread thread');
  });

  it('fails cleanly before any ACL change when the token cannot be restricted', async () => {
    const { api, calls } = recordingApi({ failAt: 'CreateRestrictedToken' });
    expect(await runWindowsTokenLauncher(spec, ['x.exe'], api, host().value)).toBe(
      LAUNCHER_FAILURE_EXIT_CODE,
    );
    expect(calls).toEqual([SETUP[0], SETUP[1], SETUP[2], 'CloseHandle base']);
  });

  it('terminates the job when told to stop, and keeps undoing even if one removal fails', async () => {
    const recording = recordingApi({ failAt: 'DeleteAce+SetNamedSecurityInfoW', failOnCall: 1 });
    const h = host();
    const running = runWindowsTokenLauncher(spec, ['x.exe'], recording.api, h.value);
    await new Promise((resolve) => setImmediate(resolve));
    expect(h.listening()).toBe(true);
    h.terminate();
    expect(recording.calls.at(-1)).toBe('TerminateJobObject job 1');
    recording.exit(1);
    expect(await running).toBe(1);
    expect(recording.calls.filter((call) => call.startsWith('DeleteAce'))).toEqual(UNDO);
    expect(h.errors).toEqual([expect.stringContaining('could not remove the ACE on C:\\w\\.git')]);
  });

  it('gives a console command the console instead of the standard handles, and works without a logon SID', async () => {
    const recording = recordingApi({ exitCode: 0 });
    recording.api.getLogonSid = () => undefined;
    await runWindowsTokenLauncher({ ...spec, tty: true }, ['x.exe'], recording.api, host().value);
    expect(recording.calls).toContain(`CreateRestrictedToken base 0xd ${CAP},${RUN},S-1-1-0`);
    expect(recording.calls.find((call) => call.startsWith('CreateProcessAsUserW'))).toContain('stdio=false');
  });
});
