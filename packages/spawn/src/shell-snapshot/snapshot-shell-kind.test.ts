import { describe, expect, it } from 'vitest';
import { snapshotCommandScript } from './snapshot-command-script.js';
import { snapshotShellKind } from './snapshot-shell-kind.js';

describe('snapshotShellKind', () => {
  it.each([
    ['/bin/bash', 'bash'],
    ['/usr/local/bin/bash', 'bash'],
    ['bash', 'bash'],
    ['/home/me/.cache/ux/zsh-fork/2ccdbd45df76/bin/zsh', 'zsh'],
    ['/bin/sh', 'sh'],
    ['/usr/bin/dash', 'sh'],
    ['/bin/ash', 'sh'],
  ])('%s → %s', (path, kind) => {
    expect(snapshotShellKind(path)).toBe(kind);
  });

  it.each([
    '/usr/bin/pwsh',
    'C:\\Windows\\System32\\cmd.exe',
    'powershell.exe',
    '/usr/bin/fish',
    '/bin/ksh',
    '/bin/bash-wrapper',
    '',
  ])('%s has no snapshot', (path) => {
    expect(snapshotShellKind(path)).toBeUndefined();
  });
});

describe('snapshotCommandScript', () => {
  it('sources the snapshot, then runs the command on its own line (bash, sh)', () => {
    expect(snapshotCommandScript('/state/snap.sh', 'echo hi', 'bash')).toBe(". '/state/snap.sh'\necho hi");
    expect(snapshotCommandScript('/state/snap.sh', 'echo hi', 'sh')).toBe(". '/state/snap.sh'\necho hi");
  });

  it('hands the command to eval for zsh and when the kind is not given', () => {
    expect(snapshotCommandScript('/s.sh', "echo 'a b'", 'zsh')).toBe(`. '/s.sh'\neval 'echo '\\''a b'\\'''`);
    expect(snapshotCommandScript('/s.sh', 'true')).toBe(`. '/s.sh'\neval 'true'`);
  });

  it('quotes a path with quotes, spaces and $ safely, and never lets `.` search PATH', () => {
    expect(snapshotCommandScript("/tmp/it's $HOME/s.sh", 'x', 'bash')).toBe(
      `. '/tmp/it'\\''s $HOME/s.sh'\nx`,
    );
    expect(snapshotCommandScript('snap.sh', 'x', 'bash')).toBe(". './snap.sh'\nx");
  });
});
