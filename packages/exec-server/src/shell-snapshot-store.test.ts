import { describe, expect, it } from 'vitest';
import { readOnlyPolicy } from './shell-snapshot-store.js';

describe('readOnlyPolicy (what a shell snapshot capture may do)', () => {
  it('takes back every write of the request, keeps what it hides, turns the network off', () => {
    expect(
      readOnlyPolicy(
        {
          fileSystem: {
            kind: 'restricted',
            entries: [
              { path: { type: 'special', value: 'root' }, access: 'read' },
              { path: { type: 'special', value: 'project_roots' }, access: 'write' },
              { path: { type: 'glob', pattern: '**/*.env' }, access: 'none' },
            ],
            glob_scan_max_depth: 4,
          },
          network: 'enabled',
        },
        '/state/shell-snapshots',
      ),
    ).toEqual({
      fileSystem: {
        kind: 'restricted',
        entries: [
          { path: { type: 'special', value: 'root' }, access: 'read' },
          { path: { type: 'special', value: 'project_roots' }, access: 'read' },
          { path: { type: 'glob', pattern: '**/*.env' }, access: 'none' },
          { path: { type: 'path', path: '/state/shell-snapshots' }, access: 'read' },
        ],
        glob_scan_max_depth: 4,
      },
      network: 'restricted',
    });
  });

  it('makes everything read-only when the request has no sandbox or an unrestricted one', () => {
    const expected = {
      fileSystem: {
        kind: 'restricted',
        entries: [
          { path: { type: 'special', value: 'root' }, access: 'read' },
          { path: { type: 'path', path: '/s' }, access: 'read' },
        ],
      },
      network: 'restricted',
    };
    expect(readOnlyPolicy(undefined, '/s')).toEqual(expected);
    expect(readOnlyPolicy({ fileSystem: { kind: 'unrestricted' }, network: 'enabled' }, '/s')).toEqual(
      expected,
    );
  });
});
