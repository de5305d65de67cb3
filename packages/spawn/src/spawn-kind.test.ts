import { describe, expect, it } from 'vitest';
import { decideSpawnKind, type SpawnKindInput } from './spawn-kind.js';

describe('decideSpawnKind', () => {
  it.each<[SpawnKindInput, string]>([
    [{ tty: true }, 'pty'],
    [{ tty: true, stdin: 'closed' }, 'pty'],
    [{ tty: true, stdin: 'pipe' }, 'pty'],
    [{ tty: false, stdin: 'pipe' }, 'pipe-with-stdin'],
    [{ tty: false, stdin: 'closed' }, 'pipe'],
    [{ tty: false }, 'pipe'],
  ])('%j → %s', (input, kind) => {
    expect(decideSpawnKind(input)).toBe(kind);
  });
});
