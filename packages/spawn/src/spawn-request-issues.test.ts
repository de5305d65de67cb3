import { describe, expect, it } from 'vitest';
import { spawnRequestIssues } from './spawn-request-issues.js';

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
