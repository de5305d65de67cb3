import { beforeAll, describe, expect, it } from 'vitest';
import { type BashParser, loadBashParser } from './bash-parser.js';
import { needsBashGrammar, SIMPLE_SCRIPT_PARSER, simpleScriptAnalysis } from './simple-script.js';

let grammar: BashParser;
beforeAll(async () => {
  grammar = await loadBashParser();
});

describe('simpleScriptAnalysis', () => {
  it.each([
    'true',
    'ls -la',
    'cargo test --release',
    'git log --oneline -5',
    'npm run build:prod',
    'git config user.name=x',
    'python3 -m pytest tests/unit',
    'curl -sS https://example.com/a,b@c',
    'make  -j4\tall',
    '  ls  ',
    'echo 100% done+ok',
    '/usr/bin/env -0',
  ])('gives what the grammar gives for %j', (script) => {
    expect(simpleScriptAnalysis(script)).toEqual(grammar.analyze(script));
  });

  it.each([
    '',
    'ls *.ts',
    'echo $HOME',
    'echo "quoted"',
    "echo 'quoted'",
    'ls > out',
    'a && b',
    'a; b',
    'a | b',
    'cd ~',
    'echo a#b',
    'FOO=1 make',
    'if true',
    'time make',
    'echo {a,b}',
    'echo !x',
    'ls\nrm -rf /',
    'echo a\\ b',
    'sleep 1 &',
  ])('leaves %j to the grammar', (script) => {
    expect(simpleScriptAnalysis(script)).toBeUndefined();
  });
});

describe('needsBashGrammar', () => {
  it.each([
    [['/bin/bash', '-lc', 'cargo test'], false],
    [['/bin/bash', '-lc', 'cargo test && echo ok'], true],
    [['ls', '-la'], false],
    [['sudo', 'bash', '-c', 'rm -rf "$HOME"'], true],
    [['sudo', 'bash', '-c', 'ls'], false],
  ] as const)('%j → %s', (argv, expected) => {
    expect(needsBashGrammar(argv)).toBe(expected);
  });

  it('the simple-script parser refuses what needs the grammar, loudly', () => {
    expect(() => SIMPLE_SCRIPT_PARSER.analyze('a && b')).toThrow(/full parse/);
  });
});
