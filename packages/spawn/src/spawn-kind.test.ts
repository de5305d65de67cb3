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
    [{ tty: false, remote: true }, 'exec-server'],
    [{ tty: true, remote: true }, 'exec-server'],
    [{ tty: false, shellSnapshot: true }, 'exec-server'],
    [{ tty: true, stdin: 'pipe', shellSnapshot: true }, 'exec-server'],
    [{ tty: false, remote: false, shellSnapshot: false, stdin: 'pipe' }, 'pipe-with-stdin'],
  ])('%j → %s', (input, kind) => {
    expect(decideSpawnKind(input)).toBe(kind);
  });
});
