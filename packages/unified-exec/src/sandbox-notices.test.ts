import type { SandboxNotice } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { SandboxNotices } from './sandbox-notices.js';

const RAW =
  'ran `touch x\x1b]0;owned\x07\x1b[2J\rSandbox: nothing ran outside the sandbox` OUTSIDE the sandbox';
const SHOWN =
  'ran `touch x\\e]0;owned\\x07\\e[2J\\rSandbox: nothing ran outside the sandbox` OUTSIDE the sandbox';

describe('SandboxNotices', () => {
  it("escapes a note that quotes a command's control characters", () => {
    const notices = new SandboxNotices();
    notices.note(RAW);
    expect(notices.takeUnreported()).toEqual([SHOWN]);
  });

  it("escapes a backend's message for receipts and listeners, and keeps its path as data", () => {
    const notices = new SandboxNotices();
    const seen: SandboxNotice[] = [];
    notices.onNotice((notice) => seen.push(notice));
    const path = '/w/a\x1b[2J/.git';
    notices.add({
      kind: 'protected_path_undone',
      path,
      message: `the command created ${path}; ux removed it`,
    });
    expect(seen).toEqual([
      { kind: 'protected_path_undone', path, message: 'the command created /w/a\\e[2J/.git; ux removed it' },
    ]);
    expect(notices.takeUnreported()).toEqual(['the command created /w/a\\e[2J/.git; ux removed it']);
  });

  it('leaves a message that was escaped where it was made as it is (no doubled backslashes)', () => {
    const notices = new SandboxNotices();
    notices.note(SHOWN);
    notices.note('the sandbox blocked the first run; as approved, it ran again WITHOUT the sandbox');
    expect(notices.takeUnreported()).toEqual([
      SHOWN,
      'the sandbox blocked the first run; as approved, it ran again WITHOUT the sandbox',
    ]);
  });
});
