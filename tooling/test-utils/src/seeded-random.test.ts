import { describe, expect, it } from 'vitest';
import { seededRandom } from './seeded-random.js';

describe('seededRandom', () => {
  it('repeats itself for a seed and differs between seeds', () => {
    const draw = (seed: number) => Array.from({ length: 5 }, seededRandom(seed).next);
    expect(draw(7)).toEqual(draw(7));
    expect(draw(7)).not.toEqual(draw(8));
  });

  it('stays in range', () => {
    const random = seededRandom(1);
    for (let i = 0; i < 1000; i++) {
      const value = random.int(10);
      expect(Number.isInteger(value) && value >= 0 && value < 10).toBe(true);
    }
    expect(['a', 'b']).toContain(random.pick(['a', 'b']));
  });
});
