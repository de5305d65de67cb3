import { describe, expect, it } from 'vitest';
import {
  STATUS_CONTROL_C_EXIT,
  WINDOWS_TERMINATE_EXIT_CODE,
  windowsExitStatus,
} from './windows-exit-status.js';

describe('windowsExitStatus', () => {
  it.each([
    [0, null, undefined, { exitCode: 0 }],
    [17, null, undefined, { exitCode: 17 }],
    // A code the host did not cause is the program's own, even when it equals the terminate code.
    [WINDOWS_TERMINATE_EXIT_CODE, null, undefined, { exitCode: 1 }],
    [WINDOWS_TERMINATE_EXIT_CODE, null, 'interrupt', { exitCode: 1 }],
    [WINDOWS_TERMINATE_EXIT_CODE, null, 'terminate', { exitCode: 137, signal: 'SIGKILL' }],
    [0, null, 'terminate', { exitCode: 0 }],
    [STATUS_CONTROL_C_EXIT, null, undefined, { exitCode: 130, signal: 'SIGINT' }],
    // The same NTSTATUS read as a signed 32-bit number.
    [-1073741510, null, 'interrupt', { exitCode: 130, signal: 'SIGINT' }],
    [-1073741819, null, undefined, { exitCode: 0xc000_0005 }],
    [null, 'SIGTERM', 'terminate', { exitCode: 143, signal: 'SIGTERM' }],
    [null, null, undefined, { exitCode: -1 }],
  ] as const)('%s / %s / %s → %j', (code, signal, requested, expected) => {
    expect(windowsExitStatus(code, signal, requested)).toEqual(expected);
  });
});
