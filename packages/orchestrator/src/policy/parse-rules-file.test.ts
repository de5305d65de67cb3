import { ConfigError } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { everyRuleFileError, parseRulesFile } from './parse-rules-file.js';

const FILE = '/home/me/.ux/rules/default.rules';
const parse = (text: string) => parseRulesFile(text, FILE, { homeDir: '/home/me' });

/** The ConfigError a text produces, as `line:column: reason`. */
function failure(text: string): { line?: number; column?: number; reason: string; message: string } {
  try {
    parse(text);
  } catch (error) {
    if (!ConfigError.isInstance(error)) throw error;
    expect(error.file).toBe(FILE);
    return { line: error.line, column: error.column, reason: error.reason, message: error.message };
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(text)}`);
}

describe('valid rule files', () => {
  it('reads Codex prefix_rule lines, with alternatives, comments and defaults', () => {
    const { rules } = parse(`# Rules for this machine
prefix_rule(pattern = ["git", ["push", "fetch"]], decision = "forbidden", justification = "Use jj instead.")

prefix_rule(
    pattern = ["npm", "test"],   # trailing comment
    decision = "allow",
)
prefix_rule(pattern=["rm"], decision="prompt")
prefix_rule(pattern=["cargo"])  # decision defaults to allow
`);
    expect(rules).toEqual([
      {
        pattern: ['git', ['push', 'fetch']],
        decision: 'forbidden',
        justification: 'Use jj instead.',
        source: { file: FILE, line: 2, column: 1 },
      },
      { pattern: ['npm', 'test'], decision: 'allow', source: { file: FILE, line: 4, column: 1 } },
      { pattern: ['rm'], decision: 'prompt', source: { file: FILE, line: 8, column: 1 } },
      { pattern: ['cargo'], decision: 'allow', source: { file: FILE, line: 9, column: 1 } },
    ]);
  });

  it('accepts positional arguments in prefix_rule order, semicolons and single-element alternatives', () => {
    const { rules } = parse(`prefix_rule(["ls"], "prompt"); prefix_rule(pattern = [["make"], "all"])`);
    expect(rules.map((rule) => [rule.pattern, rule.decision])).toEqual([
      [['ls'], 'prompt'],
      [['make', 'all'], 'allow'],
    ]);
  });

  it('decodes Starlark string literals', () => {
    const { rules } = parse(
      `prefix_rule(pattern = ['single', "tab\\there", "\\u00e9\\x41\\101", r"raw\\n", """tri"ple""", "a\\
b"], justification = '''multi
line''')\nprefix_rule(pattern = ["after"])`,
    );
    expect(rules[0]!.pattern).toEqual(['single', 'tab\there', 'éAA', 'raw\\n', 'tri"ple', 'ab']);
    expect(rules[0]!.justification).toBe('multi\nline');
    // The triple-quoted string spans two lines; positions after it stay right.
    expect(rules[1]!.source).toEqual({ file: FILE, line: 4, column: 1 });
  });

  it('checks match and not_match examples, given as words or as command lines', () => {
    expect(() =>
      parse(`prefix_rule(
  pattern = ["git", ["push", "fetch"]],
  decision = "prompt",
  match = [["git", "push", "origin"], "git fetch --all", "/usr/bin/git push"],
  not_match = [["git", "pull"], "git 'push origin'"],
)`),
    ).not.toThrow();
  });

  it('reads host_executable declarations, expanding ~/', () => {
    const { hostExecutables } =
      parse(`host_executable(name = "git", paths = ["/usr/bin/git", "/opt/homebrew/bin/git", "/usr/bin/git"])
host_executable(name = "az", paths = ["~/.local/bin/az"])`);
    expect(hostExecutables).toEqual(
      new Map([
        ['git', ['/usr/bin/git', '/opt/homebrew/bin/git']],
        ['az', ['/home/me/.local/bin/az']],
      ]),
    );
  });

  it('accepts an empty file, blank lines and comment-only lines with any indentation', () => {
    expect(parse('').rules).toEqual([]);
    expect(parse('\n\n   # indented comment\n\t\n').rules).toEqual([]);
    expect(parse('prefix_rule(pattern=["a"])\r\nprefix_rule(pattern=["b"])\r\n').rules).toHaveLength(2);
  });
});

describe('malformed rule files fail at file:line:column', () => {
  it.each([
    // Statements other than calls.
    ['an assignment', 'x = ["git"]', 1, 1, 'assignments (`x = …`) are not supported in rule files'],
    ['a def', 'def f():\n  pass', 1, 1, '`def` statements are not supported in rule files'],
    ['a load', 'load("//x.star", "y")', 1, 1, '`load` statements are not supported'],
    ['an if', 'if True:\n  prefix_rule(pattern=["a"])', 1, 1, '`if` statements are not supported'],
    ['a bare expression', '"git"', 1, 1, 'expected a rule, found the string "git"'],
    [
      'a name without a call',
      'prefix_rule',
      1,
      12,
      'expected "(" after prefix_rule, found the end of the file',
    ],
    ['a method call', 'rules.add(1)', 1, 6, 'expected "(" after rules, found "."'],
    ['indentation', '  prefix_rule(pattern=["a"])', 1, 3, 'unexpected indentation'],
    [
      'two calls on a line',
      'prefix_rule(pattern=["a"]) prefix_rule(pattern=["b"])',
      1,
      28,
      'expected a new line after',
    ],
    // Syntax inside a call.
    [
      'a missing comma',
      'prefix_rule(pattern=["a"] decision="allow")',
      1,
      27,
      'expected "," or ")" after an argument',
    ],
    ['an unclosed call', 'prefix_rule(pattern=["a"]', 1, 26, 'found the end of the file'],
    ['an unclosed list', 'prefix_rule(pattern=["a", "b")', 1, 30, 'expected "," or "]" in a list, found ")"'],
    [
      'an expression',
      'prefix_rule(pattern=["a"] + ["b"])',
      1,
      27,
      'expressions are not supported in rule files',
    ],
    [
      'a keyword without a value',
      'prefix_rule(pattern=)',
      1,
      21,
      'expected a value (a string or a list), found ")"',
    ],
    ['an unterminated string', 'prefix_rule(pattern=["git)', 1, 22, 'unterminated string'],
    ['a newline in a string', 'prefix_rule(pattern=["gi\nt"])', 1, 22, 'unterminated string'],
    ['an unknown escape', 'prefix_rule(pattern=["a\\qb"])', 1, 22, 'unknown escape \\q'],
    ['a short \\u escape', 'prefix_rule(pattern=["\\u12"])', 1, 22, 'invalid \\u escape'],
    ['an f-string', 'prefix_rule(pattern=[f"{x}"])', 1, 22, 'f-strings are not supported'],
    ['a bytes literal', 'prefix_rule(pattern=[b"x"])', 1, 22, 'bytes literals are not supported'],
    // Functions and arguments.
    [
      'an unknown function',
      'prefx_rule(pattern=["a"])',
      1,
      1,
      'unknown function "prefx_rule" (did you mean "prefix_rule"?)',
    ],
    [
      'network_rule',
      'network_rule(host="x.com", protocol="https", decision="allow")',
      1,
      1,
      'network_rule(...) is not supported',
    ],
    [
      'an unknown keyword',
      'prefix_rule(pattern=["a"], justifcation="x")',
      1,
      28,
      'prefix_rule has no argument "justifcation" (did you mean "justification"?)',
    ],
    [
      'a repeated keyword',
      'prefix_rule(pattern=["a"], pattern=["b"])',
      1,
      28,
      'prefix_rule got "pattern" twice',
    ],
    [
      'positional after keyword',
      'prefix_rule(pattern=["a"], "allow")',
      1,
      28,
      'a positional argument cannot follow',
    ],
    [
      'too many arguments',
      'prefix_rule(["a"], "allow", [], [], "j", "x")',
      1,
      42,
      'takes at most 5 arguments',
    ],
    // prefix_rule values.
    ['no pattern', 'prefix_rule(decision="allow")', 1, 1, 'prefix_rule needs a pattern'],
    ['a string pattern', 'prefix_rule(pattern="git push")', 1, 21, 'pattern must be a list'],
    ['an empty pattern', 'prefix_rule(pattern=[])', 1, 21, 'pattern must not be empty'],
    [
      'an empty word',
      'prefix_rule(pattern=["git", ""])',
      1,
      29,
      'pattern element 2 must not be an empty string',
    ],
    [
      'empty alternatives',
      'prefix_rule(pattern=["git", []])',
      1,
      29,
      'a list of alternatives must not be empty',
    ],
    [
      'a non-string alternative',
      'prefix_rule(pattern=["git", ["a", ["b"]]])',
      1,
      35,
      'alternatives must be strings',
    ],
    [
      'a number in a pattern',
      'prefix_rule(pattern=["git", 1])',
      1,
      29,
      'must be a string or a list of alternatives, got `1`',
    ],
    ['a boolean in a pattern', 'prefix_rule(pattern=[True])', 1, 22, 'got `True`'],
    [
      'an unknown decision',
      'prefix_rule(pattern=["a"], decision="alow")',
      1,
      37,
      'unknown decision "alow" (did you mean "allow"?)',
    ],
    ['a list decision', 'prefix_rule(pattern=["a"], decision=["allow"])', 1, 37, 'decision must be a string'],
    [
      'an empty justification',
      'prefix_rule(pattern=["a"], justification="  ")',
      1,
      42,
      'justification must not be empty',
    ],
    [
      'a list justification',
      'prefix_rule(pattern=["a"], justification=["x"])',
      1,
      42,
      'justification must be a string',
    ],
    // Examples.
    [
      'a failing match example',
      'prefix_rule(pattern=["git", "push"], match=["git pull"])',
      1,
      45,
      'match example ["git","pull"] does not match',
    ],
    [
      'a failing not_match example',
      'prefix_rule(pattern=["git"], not_match=[["git", "x"]])',
      1,
      41,
      'not_match example ["git","x"] matches',
    ],
    [
      'a match that is not a list',
      'prefix_rule(pattern=["a"], match="a")',
      1,
      34,
      'match must be a list of examples',
    ],
    ['an empty example', 'prefix_rule(pattern=["a"], match=[""])', 1, 35, 'match example must not be empty'],
    [
      'an empty example list',
      'prefix_rule(pattern=["a"], match=[[]])',
      1,
      35,
      'match example must not be an empty list',
    ],
    [
      'an unterminated example',
      `prefix_rule(pattern=["a"], match=["a 'b"])`,
      1,
      35,
      'has an unterminated quote',
    ],
    [
      'a non-string example word',
      'prefix_rule(pattern=["a"], match=[["a", 1]])',
      1,
      41,
      'example words must be strings',
    ],
    [
      'a numeric example',
      'prefix_rule(pattern=["a"], match=[1])',
      1,
      35,
      'examples must be strings or lists of strings',
    ],
    // host_executable.
    [
      'host_executable without paths',
      'host_executable(name="git")',
      1,
      1,
      'host_executable needs a name and paths',
    ],
    [
      'a path in the name',
      'host_executable(name="/usr/bin/git", paths=[])',
      1,
      22,
      'must be a bare program name',
    ],
    [
      'a relative path',
      'host_executable(name="git", paths=["bin/git"])',
      1,
      36,
      'must be absolute or start with ~/',
    ],
    [
      'a path to another program',
      'host_executable(name="git", paths=["/usr/bin/hg"])',
      1,
      36,
      'must end in the program name "git"',
    ],
    [
      'paths not in a list',
      'host_executable(name="git", paths="/usr/bin/git")',
      1,
      35,
      'paths must be a list',
    ],
    ['a non-string path', 'host_executable(name="git", paths=[1])', 1, 36, 'paths must be strings'],
  ])('%s', (_name, text, line, column, reason) => {
    const error = failure(text);
    expect(error.reason).toContain(reason);
    expect({ line: error.line, column: error.column }).toEqual({ line, column });
    expect(error.message.startsWith(`${FILE}:${line}:${column}: `)).toBe(true);
  });

  it('reports the line of a problem deep in a multi-line call', () => {
    const error = failure(`prefix_rule(pattern=["a"])

prefix_rule(
    pattern = ["git"],
    decision = "maybe",
)`);
    expect([error.line, error.column]).toEqual([5, 16]);
    expect(error.reason).toBe('unknown decision "maybe"; expected one of allow, prompt, forbidden');
  });
});

describe('everyRuleFileError', () => {
  it('names every broken call of a file, each at its line, and nothing for a good file', () => {
    const text = [
      'prefix_rule(pattern = ["git", "status"], decision = "allow")',
      'prefix_rule(pattern = ["rm"], decision = "alow")',
      'prefix_rul(pattern = ["ls"])',
      'prefix_rule(pattern = [], decision = "allow")',
      'network_rule(host = "x")',
    ].join('\n');
    const errors = everyRuleFileError(text, '/r/default.rules');
    expect(errors.map((error) => error.line)).toEqual([2, 3, 4, 5]);
    expect(errors.every((error) => error.file === '/r/default.rules')).toBe(true);
    expect(() => parseRulesFile(text, '/r/default.rules')).toThrow(errors[0]!.message);
    expect(everyRuleFileError('prefix_rule(pattern = ["ls"], decision = "allow")\n', '/r/ok.rules')).toEqual(
      [],
    );
  });

  it('a file that is not the Starlark subset is one mistake', () => {
    const errors = everyRuleFileError('if x:\n  pass\nprefix_rul()\n', '/r/bad.rules');
    expect(errors).toHaveLength(1);
    expect(errors[0]!.line).toBe(1);
  });
});
