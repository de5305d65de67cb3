import { describe, expect, it } from 'vitest';
import { Win32CallError } from './win32-api.js';
import { JOB_ASSIGN_PROCESS_ACCESS, type Win32JobApi, win32JobObjects } from './win32-job-objects.js';

/** A recording fake of the job calls: handles are names, every call is logged in order. */
function recordingApi(fail: Partial<Record<keyof Win32JobApi, number>> = {}): {
  api: Win32JobApi;
  calls: string[];
} {
  const calls: string[] = [];
  let jobs = 0;
  const maybeFail = (name: keyof Win32JobApi) => {
    const code = fail[name];
    if (code !== undefined) throw new Win32CallError(name, code);
  };
  return {
    calls,
    api: {
      createJobObject() {
        calls.push('CreateJobObjectW');
        maybeFail('createJobObject');
        return `job${++jobs}`;
      },
      setKillOnJobClose(job) {
        calls.push(`SetInformationJobObject(${job}, KILL_ON_JOB_CLOSE)`);
        maybeFail('setKillOnJobClose');
      },
      openProcess(pid, access) {
        calls.push(`OpenProcess(0x${access.toString(16)}, ${pid})`);
        maybeFail('openProcess');
        return `process${pid}`;
      },
      assignProcessToJobObject(job, process) {
        calls.push(`AssignProcessToJobObject(${job}, ${process})`);
        maybeFail('assignProcessToJobObject');
      },
      terminateJobObject(job, exitCode) {
        calls.push(`TerminateJobObject(${job}, ${exitCode})`);
      },
      closeHandle(handle) {
        calls.push(`CloseHandle(${handle})`);
      },
    },
  };
}

describe('win32JobObjects (recording fake of Win32)', () => {
  it('creates a kill-on-close job, assigns a pid through a process handle it closes, terminates, closes once', () => {
    const { api, calls } = recordingApi();
    const job = win32JobObjects(api).create();
    job.assign(4242);
    job.terminate(1);
    job.close();
    job.close();
    job.terminate(1);
    expect(JOB_ASSIGN_PROCESS_ACCESS).toBe(0x0101);
    expect(calls).toEqual([
      'CreateJobObjectW',
      'SetInformationJobObject(job1, KILL_ON_JOB_CLOSE)',
      'OpenProcess(0x101, 4242)',
      'AssignProcessToJobObject(job1, process4242)',
      'CloseHandle(process4242)',
      'TerminateJobObject(job1, 1)',
      'CloseHandle(job1)',
    ]);
  });

  it('closes the job when the kill-on-close limit cannot be set, and the process handle when assigning fails', () => {
    const limit = recordingApi({ setKillOnJobClose: 87 });
    expect(() => win32JobObjects(limit.api).create()).toThrow(/SetInformationJobObject|87/);
    expect(limit.calls).toEqual([
      'CreateJobObjectW',
      'SetInformationJobObject(job1, KILL_ON_JOB_CLOSE)',
      'CloseHandle(job1)',
    ]);

    const assign = recordingApi({ assignProcessToJobObject: 5 });
    const job = win32JobObjects(assign.api).create();
    expect(() => job.assign(7)).toThrow(/Win32 error 5 \(ERROR_ACCESS_DENIED\)/);
    expect(assign.calls.slice(2)).toEqual([
      'OpenProcess(0x101, 7)',
      'AssignProcessToJobObject(job1, process7)',
      'CloseHandle(process7)',
    ]);

    const open = recordingApi({ openProcess: 87 });
    expect(() => win32JobObjects(open.api).create().assign(8)).toThrow(Win32CallError);
    expect(open.calls.at(-1)).toBe('OpenProcess(0x101, 8)');
  });
});
