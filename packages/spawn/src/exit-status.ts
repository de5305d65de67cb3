import { constants } from 'node:os';
import type { ExitStatus } from '@ux/protocol/core';

/** An exit code, or `128 + signal number` for a signal death (SIGINT → 130, SIGKILL → 137). */
export function exitStatusFrom(
  code: number | null,
  signal: NodeJS.Signals | number | null | undefined,
): ExitStatus {
  if (signal !== null && signal !== undefined && signal !== 0) {
    const number = typeof signal === 'number' ? signal : constants.signals[signal];
    const name =
      typeof signal === 'string'
        ? signal
        : (Object.entries(constants.signals).find(([, value]) => value === signal)?.[0] ??
          `signal ${signal}`);
    return { exitCode: 128 + (number ?? 0), signal: name };
  }
  return { exitCode: code ?? -1 };
}
