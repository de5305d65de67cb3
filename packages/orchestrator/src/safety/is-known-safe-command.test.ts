import { beforeAll, describe, expect, it } from 'vitest';
import { type BashParser, loadBashParser } from '../shell/bash-parser.js';
import { isKnownSafeCommand, isSafeToExec } from './is-known-safe-command.js';
import { isReadOnlyGit } from './is-read-only-git.js';

let bash: BashParser;
beforeAll(async () => {
  bash = await loadBashParser();
});
const safe = (argv: string[], platform: NodeJS.Platform = 'linux') =>
  isKnownSafeCommand(argv, { platform, bash });
const words = (line: string) => line.split(' ');

describe('known-safe programs', () => {
  it.each([
    'cat',
    'cd',
    'cut',
    'echo',
    'expr',
    'false',
    'grep',
    'head',
    'id',
    'ls',
    'nl',
    'paste',
    'pwd',
    'rev',
    'seq',
    'stat',
    'tail',
    'tr',
    'true',
    'uname',
    'uniq',
    'wc',
    'which',
    'whoami',
  ])('%s with any arguments', (program) => {
    expect(safe([program, '-x', 'whatever'])).toBe(true);
    expect(safe([`/usr/bin/${program}`])).toBe(true);
  });

  it('numfmt and tac only on Linux', () => {
    expect(safe(['numfmt', '1000'], 'linux')).toBe(true);
    expect(safe(['tac', 'Cargo.toml'], 'linux')).toBe(true);
    expect(safe(['numfmt', '1000'], 'darwin')).toBe(false);
    expect(safe(['tac', 'Cargo.toml'], 'darwin')).toBe(false);
  });

  it.each([['foo'], ['cargo', 'check'], ['rm', 'x'], ['python3', '-c', 'print(1)'], ['git', 'fetch'], []])(
    'not %j',
    (...argv) => {
      expect(safe(argv)).toBe(false);
    },
  );
});

describe('programs safe only without some options', () => {
  it('base64 without -o/--output', () => {
    expect(safe(words('base64 file.bin'))).toBe(true);
    for (const line of [
      'base64 -o out.bin',
      'base64 --output out.bin',
      'base64 --output=out.bin',
      'base64 -ob64.txt',
    ]) {
      expect(safe(words(line)), line).toBe(false);
    }
  });

  it('find without actions that run, delete or write', () => {
    expect(safe(words('find . -name file.txt'))).toBe(true);
    for (const action of [
      '-exec',
      '-execdir',
      '-ok',
      '-okdir',
      '-delete',
      '-fls',
      '-fprint',
      '-fprint0',
      '-fprintf',
    ]) {
      expect(safe(['find', '.', '-name', 'x', action, 'y']), action).toBe(false);
    }
  });

  it('rg without --pre, --hostname-bin, --search-zip, -z', () => {
    expect(safe(words('rg Cargo.toml -n'))).toBe(true);
    for (const line of [
      'rg --search-zip files',
      'rg -z files',
      'rg --pre pwned files',
      'rg --pre=pwned files',
      'rg --hostname-bin pwned files',
      'rg --hostname-bin=pwned files',
    ]) {
      expect(safe(words(line)), line).toBe(false);
    }
  });

  it('sed -n with a line or a range to print, at most four words', () => {
    expect(safe(words('sed -n 10p file.txt'))).toBe(true);
    expect(safe(words('sed -n 1,5p file.txt'))).toBe(true);
    expect(safe(words('sed -n 1,5p'))).toBe(true);
    for (const line of [
      'sed -n xp file.txt',
      'sed -n 1,2,3p file.txt',
      'sed -n ,5p file.txt',
      'sed -n 5 file.txt',
      'sed -n 1,5p a b',
      'sed -i 1,5p file.txt',
      'sed -n',
      'sed -n 1,5pw file.txt',
    ]) {
      expect(safe(words(line)), line).toBe(false);
    }
  });
});

describe('git, read-only', () => {
  it.each([
    'git status',
    'git log --oneline -5',
    'git log -p -1',
    'git diff',
    'git diff --stat HEAD~1',
    'git show HEAD',
    'git branch',
    'git branch --show-current',
    'git branch -a -v',
    'git branch --format=%(refname)',
    'git --no-pager log',
    '/usr/bin/git status',
  ])('%s is safe', (line) => {
    expect(isReadOnlyGit(words(line))).toBe(true);
    expect(safe(words(line))).toBe(true);
  });

  it.each([
    ['a writing subcommand', 'git commit -m x'],
    ['an unknown subcommand', 'git fetch'],
    ['no subcommand', 'git'],
    ['only options', 'git --version'],
    ['-C elsewhere', 'git -C /other status'],
    ['-C inline', 'git -C/other status'],
    ['-c config', 'git -c core.pager=evil log'],
    ['-c inline', 'git -ccore.pager=evil log'],
    ['--git-dir', 'git --git-dir=/x/.git status'],
    ['--git-dir as two words', 'git --git-dir /x/.git status'],
    ['--work-tree', 'git --work-tree=/x status'],
    ['--exec-path', 'git --exec-path=/x status'],
    ['--config-env', 'git --config-env=a=B status'],
    ['--namespace', 'git --namespace=x log'],
    ['--super-prefix', 'git --super-prefix=x log'],
    ['a pager', 'git -p log'],
    ['a pager (long)', 'git --paginate log'],
    ['--output', 'git diff --output=/tmp/x'],
    ['--output as two words', 'git log --output /tmp/x'],
    ['--ext-diff', 'git diff --ext-diff'],
    ['--textconv', 'git show --textconv HEAD'],
    ['--exec', 'git log --exec=x'],
    ['creating a branch', 'git branch feature'],
    ['deleting a branch', 'git branch -d feature'],
    ['moving a branch', 'git branch -m a b'],
    ['a listing flag and a name', 'git branch -v feature'],
    ['a later word named like a subcommand', 'git checkout status'],
  ])('not with %s: %s', (_name, line) => {
    expect(isReadOnlyGit(words(line))).toBe(false);
  });

  it('is not a program called something else', () => {
    expect(isReadOnlyGit(words('gitx status'))).toBe(false);
    expect(isReadOnlyGit([])).toBe(false);
  });
});

describe('shell scripts', () => {
  it.each([
    'ls',
    'ls -1',
    'grep -R "Cargo.toml" -n',
    'sed -n 1,5p file.txt',
    "sed -n '1,5p' file.txt",
    'find . -name file.txt',
    'grep -R "Cargo.toml" -n || true',
    'ls && pwd',
    "echo 'hi' ; ls",
    'ls | wc -l',
    'git status && git diff',
  ])('bash -lc %j is safe', (script) => {
    expect(safe(['bash', '-lc', script])).toBe(true);
    expect(safe(['/bin/zsh', '-c', script])).toBe(true);
  });

  it.each([
    ['an unsafe command in the list', 'ls && rm -rf /'],
    ['an unsafe find', 'find . -name file.txt -delete'],
    ['a subshell', '(ls)'],
    ['a nested subshell', 'ls || (pwd && echo hi)'],
    ['a redirection', 'ls > out.txt'],
    ['a heredoc', "cat <<'EOF'\nhi\nEOF"],
    ['a compound that writes', 'cat ./one.txt && touch ./two.txt'],
    ['a substitution', 'echo $(rm x)'],
    ['a glob', 'ls *.py'],
    ['an empty script', ''],
    ['a whitespace-only script', '   '],
  ])('not with %s', (_name, script) => {
    expect(safe(['bash', '-lc', script])).toBe(false);
  });

  it('needs exactly [shell, -c|-lc, script]', () => {
    expect(safe(['bash', '-lc', 'git', 'status'])).toBe(false);
    expect(safe(['bash', '-x', 'ls'])).toBe(false);
    expect(safe(['fish', '-c', 'ls'])).toBe(false);
    expect(safe(['bash', '-lc', "'git status'"])).toBe(false);
  });

  it('isSafeToExec never looks into a shell', () => {
    expect(isSafeToExec(['bash', '-lc', 'ls'], 'linux')).toBe(false);
  });
});
