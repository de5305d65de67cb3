import { describe, expect, it } from 'vitest';
import { InvalidArgumentsError } from '../errors/errors.js';
import { checkResizeSize } from './is-valid-terminal-size.js';

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
