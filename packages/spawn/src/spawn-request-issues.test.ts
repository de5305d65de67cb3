import { InvalidArgumentsError } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { checkResizeSize, spawnRequestIssues } from './spawn-request-issues.js';

describe('spawnRequestIssues', () => {
  it('passes a clean request', () => {
    expect(spawnRequestIssues({ argv: ['a', 'b'], env: { A: '1' }, size: { rows: 24, cols: 80 } })).toEqual(
      [],
    );
  });

  it('names every problem once, by path', () => {
    expect(
      spawnRequestIssues({
        argv: ['ok', 7, 'n\0ul'],
        env: { '': 'x', 'A=B': 'x', C: 3, D: 'v\0' },
        size: { rows: 0, cols: 80 },
      }),
    ).toEqual([
      { path: 'argv[1]', message: 'must be a string' },
      { path: 'argv[2]', message: 'must not contain a NUL byte' },
      { path: 'env.', message: 'is not a valid variable name' },
      { path: 'env.A=B', message: 'is not a valid variable name' },
      { path: 'env.C', message: 'must be a string' },
      { path: 'env.D', message: 'must not contain a NUL byte' },
      { path: 'size', message: 'rows and cols must be whole numbers from 1 to 10000' },
    ]);
  });
});

describe('checkResizeSize', () => {
  it('throws an InvalidArgumentsError for resize with the size rule, and nothing for a good size', () => {
    expect(() => checkResizeSize({ rows: 40, cols: 120 })).not.toThrow();
    const error = (() => {
      try {
        checkResizeSize({ rows: 10_001, cols: 1 });
      } catch (caught) {
        return caught;
      }
    })();
    expect(InvalidArgumentsError.isInstance(error)).toBe(true);
    expect(String((error as Error).message)).toContain('rows and cols must be whole numbers from 1 to 10000');
  });
});
