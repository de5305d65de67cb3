import { describe, expect, it } from 'vitest';
import { exitStatusFrom } from './exit-status.js';

describe('exitStatusFrom', () => {
  it.each([
    [0, null, { exitCode: 0 }],
    [17, null, { exitCode: 17 }],
    [null, 'SIGINT', { exitCode: 130, signal: 'SIGINT' }],
    [null, 'SIGKILL', { exitCode: 137, signal: 'SIGKILL' }],
    [0, 9, { exitCode: 137, signal: 'SIGKILL' }],
    [0, 0, { exitCode: 0 }],
    [null, null, { exitCode: -1 }],
  ] as const)('code %s, signal %s → %j', (code, signal, expected) => {
    expect(exitStatusFrom(code, signal)).toEqual(expected);
  });
});
