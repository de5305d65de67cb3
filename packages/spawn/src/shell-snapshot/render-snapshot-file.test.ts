import { describe, expect, it } from 'vitest';
import { parseCaptureOutput } from './parse-capture-output.js';
import { renderSnapshotFile } from './render-snapshot-file.js';

const M = '__ux_snapshot_test';
const section = (name: string, body: string) => `\n${M}:${name}\n${body}`;

describe('parseCaptureOutput', () => {
  it('splits sections; what came before the begin marker or after the end one is kept apart', () => {
    const out = parseCaptureOutput(
      `noise from rc\nmore${section('begin', '')}${section('a', 'one\n')}${section('b', 'two')}${section('end', 'logout noise')}`,
      M,
    );
    expect(out).toEqual({
      before: 'noise from rc\nmore',
      sections: new Map([
        ['begin', ''],
        ['a', 'one\n'],
        ['b', 'two'],
      ]),
      begun: true,
      ended: true,
      after: 'logout noise',
    });
  });

  it('reports a capture that stopped midway', () => {
    const out = parseCaptureOutput(`${section('begin', '')}${section('a', 'partial')}`, M);
    expect(out.begun).toBe(true);
    expect(out.ended).toBe(false);
  });
});

describe('renderSnapshotFile', () => {
  const bashOutput = parseCaptureOutput(
    [
      section('begin', ''),
      section('set', 'set +o allexport\nset -o xtrace\nset -o history\nset -o errexit'),
      section('shopt', 'shopt -s extglob\nshopt -u dotglob\nshopt -s login_shell\nshopt -u expand_aliases'),
      section('umask', '0027'),
      section('functions', 'f () \n{ \n    echo f\n}\ndeclare -fx g'),
      section('function-attributes', 'declare -f f\ndeclare -fx g'),
      section('aliases', "alias ll='ls -l'"),
      section('exports', 'NEW=v\0SAME=1\0CHANGED=after\0PWD=/x\0SHLVL=1\0PINNED=p\0'),
      section('end', ''),
    ].join(''),
    M,
  );

  it('writes only changed variables, unsets removed ones, and filters the options (bash)', () => {
    const { text, changedVariables } = renderSnapshotFile({
      kind: 'bash',
      shell: '/bin/bash',
      capturedAt: 0,
      output: bashOutput,
      startEnv: { SAME: '1', CHANGED: 'before', GONE: 'x', PINNED: 'q', 'BAD-NAME': 'y' },
      exclude: (name) => name === 'PINNED',
    });
    expect(changedVariables).toEqual(['CHANGED', 'GONE', 'NEW']);
    const lines = text.split('\n');
    expect(lines.slice(2)).toEqual([
      '\\unalias -a 2>/dev/null',
      'shopt -s extglob',
      'shopt -u dotglob',
      'unset GONE',
      "export CHANGED='after'",
      "export NEW='v'",
      "alias ll='ls -l'",
      'f () ',
      '{ ',
      '    echo f',
      '}',
      'builtin declare -fx g',
      'builtin umask 0027',
      'builtin set +o allexport',
      'builtin set -o errexit',
      'builtin shopt -s expand_aliases',
      '',
    ]);
  });

  it('writes emulate, setopt (without how the shell was started) for zsh', () => {
    const output = parseCaptureOutput(
      [
        section('begin', ''),
        section('emulate', 'sh'),
        section('setopt', 'extendedglob\nlogin\nnohashdirs\nxtrace\ninteractive'),
        section('umask', '022'),
        section('kshoptionprint', 'on'),
        section('functions', 'zf () {\n\techo zf\n}'),
        section('aliases', "alias -g G='| grep'"),
        section('exports', 'A=1\0'),
        section('end', ''),
      ].join(''),
      M,
    );
    const { text } = renderSnapshotFile({
      kind: 'zsh',
      shell: '/bin/zsh',
      capturedAt: 0,
      output,
      startEnv: {},
    });
    expect(text.split('\n').slice(2)).toEqual([
      "\\unalias -m '*' 2>/dev/null || \\builtin true",
      'emulate sh',
      'setopt extendedglob nohashdirs kshoptionprint',
      "export A='1'",
      "alias -g G='| grep'",
      'builtin unsetopt aliases',
      'zf () {',
      '\techo zf',
      '}',
      'builtin setopt aliases',
      'builtin umask 022',
      '',
    ]);
  });

  it('keeps a shell path with a newline inside the header comment', () => {
    const { text } = renderSnapshotFile({
      kind: 'sh',
      shell: '/odd\npath/sh',
      capturedAt: 0,
      output: parseCaptureOutput(`${section('begin', '')}${section('export-p', '')}${section('end', '')}`, M),
      startEnv: {},
    });
    expect(text.split('\n')[0]).toContain('/odd?path/sh');
    expect(text.split('\n')).toHaveLength(3);
  });
});
