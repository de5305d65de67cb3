import type { ExitStatus } from '@ux/protocol/core';
import { exitStatusFrom } from './exit-status.js';

/** NTSTATUS STATUS_CONTROL_C_EXIT: how a console program that does not handle Ctrl-C ends. */
export const STATUS_CONTROL_C_EXIT = 0xc000_013a;
/**
 * The exit code the Windows spawner ends a tree with on `terminate()` (TerminateJobObject), the same one
 * libuv's `kill()` (TerminateProcess) gives.
 */
export const WINDOWS_TERMINATE_EXIT_CODE = 1;

/**
 * A Windows exit, in the protocol's POSIX terms. Windows has no signals, so: STATUS_CONTROL_C_EXIT is an
 * interrupt (130, `SIGINT`); the terminate code after the spawner terminated the tree is a kill (137,
 * `SIGKILL`); every other code is passed through as the unsigned 32-bit value `GetExitCodeProcess` gave
 * (an NTSTATUS crash such as 0xC0000005 stays 3221225477). A signal name (libuv reports one for its own
 * `kill()`) maps as on POSIX.
 */
export function windowsExitStatus(
  code: number | null,
  signal: NodeJS.Signals | null | undefined,
  requested: 'interrupt' | 'terminate' | undefined,
): ExitStatus {
  if (signal) return exitStatusFrom(null, signal);
  if (code === null) return { exitCode: -1 };
  const unsigned = code >>> 0;
  if (unsigned === STATUS_CONTROL_C_EXIT) return { exitCode: 130, signal: 'SIGINT' };
  if (requested === 'terminate' && unsigned === WINDOWS_TERMINATE_EXIT_CODE)
    return { exitCode: 137, signal: 'SIGKILL' };
  return { exitCode: unsigned };
}
