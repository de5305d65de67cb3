import { describe, expect, it } from 'vitest';
import { execCommandYieldMs, writeStdinYieldMs } from './yield-time.js';

describe('yield clamps', () => {
  it.each([
    [undefined, 10_000],
    [10, 250],
    [0, 250],
    [31_415, 30_000],
    [1_000, 1_000],
  ])('exec_command %s → %s', (requested, expected) => {
    expect(execCommandYieldMs(requested)).toBe(expected);
  });

  it.each([
    [undefined, false, 250],
    [10, false, 250],
    [60_000, false, 30_000],
    [undefined, true, 5_000],
    [800, true, 5_000],
    [60_000, true, 60_000],
    [900_000, true, 300_000],
  ])('write_stdin %s (poll %s) → %s', (requested, poll, expected) => {
    expect(writeStdinYieldMs(requested, poll)).toBe(expected);
  });

  it('never lets the poll ceiling fall below 5000 ms', () => {
    expect(writeStdinYieldMs(60_000, true, 1_000)).toBe(5_000);
    expect(writeStdinYieldMs(60_000, true, 20_000)).toBe(20_000);
  });
});
