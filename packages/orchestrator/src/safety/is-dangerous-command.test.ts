import { beforeAll, describe, expect, it } from 'vitest';
import { type BashParser, loadBashParser } from '../shell/bash-parser.js';
import { isDangerousCommand } from './is-dangerous-command.js';

let bash: BashParser;
beforeAll(async () => {
  bash = await loadBashParser();
});
const dangerous = (argv: (string | null)[]) => isDangerousCommand(argv, { bash });

describe('dangerous commands', () => {
  it.each([
    ['rm', '-rf', '/'],
    ['rm', '-f', '/'],
    ['/bin/rm', '-fr', '/tmp/example'],
    ['rm', '-r', '-f', '/tmp/example'],
    ['rm', '--force', '/tmp/example'],
    ['rm', '/tmp/example', '-f'],
    ['rm', '-vf', 'x'],
    ['sudo', 'rm', '-rf', '/tmp/example'],
    ['sudo', '-u', 'root', 'rm', '-rf', '/'],
    ['sudo', '--', 'rm', '-f', 'x'],
    ['env', 'FOO=1', 'rm', '-rf', 'x'],
    ['env', '-i', '-u', 'HOME', 'rm', '-f', 'x'],
    ['env', '--', 'rm', '-f', 'x'],
    ['sudo', 'env', 'bash', '-c', 'sudo rm -f x'],
  ])('%j', (...argv) => {
    expect(dangerous(argv)).toBe(true);
  });

  it.each([
    'rm -rf /tmp/example',
    'printf x | rm -rf /tmp/example',
    'if test -d /tmp/example; then rm --force /tmp/example; fi',
    'rm -rf "$TARGET" >/dev/null',
    'for target in /tmp/a /tmp/b; do rm -r -f "$target"; done',
    'echo "$(rm -rf /tmp/example)"',
    'FOO=1 rm -rf x',
    'rm -r\\\nf x',
  ])('inside bash -lc %j', (script) => {
    expect(dangerous(['bash', '-lc', script])).toBe(true);
  });

  it.each([
    [['rm', '-r', '/tmp/example']],
    [['rm', '--', '-f']],
    [['rm', '--recursive', 'x']],
    [['rm', null, 'x']],
    [['bash', '-lc', "echo 'rm -rf /tmp/example'"]],
    [['bash', '-lc', 'cmd=rm; $cmd -rf /tmp/example']],
    [['sudo', 'ls']],
    [['sudo']],
    [['env', '-S', 'rm -f x']],
    [['env', null, 'rm', '-f', 'x']],
    [[null, '-rf']],
    [[]],
  ])('not %j', (argv) => {
    expect(dangerous(argv)).toBe(false);
  });

  it('follows nested shells, up to a depth limit', () => {
    const nest = (levels: number) => {
      let script = 'rm -f x';
      for (let i = 0; i < levels; i++) script = `bash -c ${JSON.stringify(script)}`;
      return ['bash', '-c', script];
    };
    expect(dangerous(nest(3))).toBe(true);
    expect(dangerous(nest(12))).toBe(false);
  });
});
