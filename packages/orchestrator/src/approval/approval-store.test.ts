import { beforeAll, describe, expect, it } from 'vitest';
import { type BashParser, loadBashParser } from '../shell/bash-parser.js';
import { approvalKey, createApprovalStore } from './approval-store.js';
import { canonicalCommand, SHELL_SCRIPT_MARKER } from './canonical-command.js';

let bash: BashParser;
beforeAll(async () => {
  bash = await loadBashParser();
});

describe('canonicalCommand', () => {
  it('is the single plain command of a shell script, whatever the shell', () => {
    expect(canonicalCommand(['/bin/bash', '-lc', 'cargo test'], bash)).toEqual(['cargo', 'test']);
    expect(canonicalCommand(['zsh', '-c', "cargo 'test'"], bash)).toEqual(['cargo', 'test']);
  });

  it('is the script under a marker otherwise', () => {
    expect(canonicalCommand(['/bin/bash', '-lc', 'ls && pwd'], bash)).toEqual([
      SHELL_SCRIPT_MARKER,
      '-lc',
      'ls && pwd',
    ]);
    expect(canonicalCommand(['sh', '-c', 'echo $HOME'], bash)).toEqual([
      SHELL_SCRIPT_MARKER,
      '-c',
      'echo $HOME',
    ]);
    expect(canonicalCommand(['bash', '-c', '  '], bash)).toEqual([SHELL_SCRIPT_MARKER, '-c', '  ']);
    expect(SHELL_SCRIPT_MARKER).toBe('__ux_shell_script__');
  });

  it('is the argv for anything that is not a shell script', () => {
    expect(canonicalCommand(['git', 'status'], bash)).toEqual(['git', 'status']);
  });
});

describe('approvalKey', () => {
  const fields = {
    command: ['cargo', 'test'],
    cwd: '/work',
    tty: false,
    sandbox_permissions: 'use_default' as const,
  };

  it('is the JSON of the fields, independent of key order', () => {
    expect(approvalKey(fields)).toBe(
      '{"additional_permissions":null,"command":["cargo","test"],"cwd":"/work","sandbox_permissions":"use_default","tty":false}',
    );
    const a = approvalKey({
      ...fields,
      additional_permissions: { network: { enabled: true }, file_system: { read: ['a'], write: ['b'] } },
    });
    const b = approvalKey({
      ...fields,
      additional_permissions: { file_system: { write: ['b'], read: ['a'] }, network: { enabled: true } },
    });
    expect(a).toBe(b);
  });

  it('differs in every field', () => {
    const keys = new Set([
      approvalKey(fields),
      approvalKey({ ...fields, command: ['cargo', 'build'] }),
      approvalKey({ ...fields, cwd: '/other' }),
      approvalKey({ ...fields, tty: true }),
      approvalKey({ ...fields, sandbox_permissions: 'require_escalated' }),
      approvalKey({ ...fields, additional_permissions: { network: { enabled: true } } }),
    ]);
    expect(keys.size).toBe(6);
  });
});

describe('createApprovalStore', () => {
  it('remembers, counts and forgets', () => {
    const store = createApprovalStore();
    expect(store.isApprovedForSession('k')).toBe(false);
    store.approveForSession('k');
    store.approveForSession('k');
    expect(store.isApprovedForSession('k')).toBe(true);
    expect(store.size).toBe(1);
    store.clear();
    expect(store.isApprovedForSession('k')).toBe(false);
    expect(store.size).toBe(0);
  });
});
