import { describe, expect, it } from 'vitest';
import { executableName, shellInvocation } from './shell-invocation.js';
import { shlexJoin } from './shlex-join.js';
import { shlexSplit } from './shlex-split.js';

describe('shlexJoin', () => {
  it('quotes only what needs quoting', () => {
    expect(shlexJoin(['git', 'commit', '-m', "it's done", '', 'a b', '/x/y.z', null])).toBe(
      `git commit -m 'it'"'"'s done' '' 'a b' /x/y.z …`,
    );
  });
});

describe('shlexSplit', () => {
  it.each<[string, string[] | null]>([
    ['git push origin', ['git', 'push', 'origin']],
    ["git 'push origin'", ['git', 'push origin']],
    ['echo "a \\"b\\" $c \\x"', ['echo', 'a "b" $c \\x']],
    ['a\\ b c\\\nd', ['a b', 'cd']],
    ["x''y", ['xy']],
    ['  spaced   out  ', ['spaced', 'out']],
    ['', []],
    ["'open", null],
    ['"open', null],
    ['trailing\\', null],
  ])('%j', (line, expected) => {
    expect(shlexSplit(line)).toEqual(expected);
  });
});

describe('shellInvocation', () => {
  it('recognises [bash|zsh|sh, -c|-lc, script] by the shell file name', () => {
    expect(shellInvocation(['/bin/bash', '-lc', 'ls'])).toEqual({
      shell: '/bin/bash',
      flag: '-lc',
      script: 'ls',
    });
    expect(shellInvocation(['zsh', '-c', 'ls'])).toMatchObject({ flag: '-c' });
    expect(shellInvocation(['/usr/bin/sh', '-c', ''])).toMatchObject({ script: '' });
    expect(shellInvocation(['bash', '-c'])).toBeNull();
    expect(shellInvocation(['bash', '-c', 'ls', 'x'])).toBeNull();
    expect(shellInvocation(['bash', '-x', 'ls'])).toBeNull();
    expect(shellInvocation(['fish', '-c', 'ls'])).toBeNull();
  });

  it('executableName is the last path component', () => {
    expect(executableName('/usr/bin/git')).toBe('git');
    expect(executableName('git')).toBe('git');
  });
});
