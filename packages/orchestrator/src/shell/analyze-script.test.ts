import { beforeAll, describe, expect, it } from 'vitest';
import { type BashParser, loadBashParser } from './bash-parser.js';

let bash: BashParser;
beforeAll(async () => {
  bash = await loadBashParser();
});

describe('plain scripts split into their commands', () => {
  it.each([
    ['ls', [['ls']]],
    ['ls -1', [['ls', '-1']]],
    ['ls && pwd', [['ls'], ['pwd']]],
    ['ls || true', [['ls'], ['true']]],
    ['ls ; pwd', [['ls'], ['pwd']]],
    ['ls | wc -l', [['ls'], ['wc', '-l']]],
    ["ls && pwd; echo 'hi there' | wc -l", [['ls'], ['pwd'], ['echo', 'hi there'], ['wc', '-l']]],
    ['ls\npwd', [['ls'], ['pwd']]],
    ['ls # a comment', [['ls']]],
    ['echo 123 456', [['echo', '123', '456']]],
    ['echo -1', [['echo', '-1']]],
  ])('%j', (script, expected) => {
    expect(bash.analyze(script).plain).toEqual(expected);
  });

  it('decodes quoting the way bash does', () => {
    expect(bash.analyze(`echo "hello world" 'single $HOME' "a\\"b" "\\$x" "back\\\\slash"`).plain).toEqual([
      ['echo', 'hello world', 'single $HOME', 'a"b', '$x', 'back\\slash'],
    ]);
    expect(bash.analyze(`echo "/usr"'/'"local"/bin`).plain).toEqual([['echo', '/usr/local/bin']]);
    expect(bash.analyze(`rg -n "foo" -g"*.py"`).plain).toEqual([['rg', '-n', 'foo', '-g*.py']]);
    expect(bash.analyze('echo a\\ b \\*').plain).toEqual([['echo', 'a b', '*']]);
    expect(bash.analyze('git commit -m "line1\nline2"').plain).toEqual([
      ['git', 'commit', '-m', 'line1\nline2'],
    ]);
    // A quoted program name stays one word: `'git status'` is a program with a space in its name.
    expect(bash.analyze("'git status'").plain).toEqual([['git status']]);
  });

  it('joins words that only a line continuation separates, as bash does', () => {
    expect(bash.analyze('rm -r\\\nf x').plain).toEqual([['rm', '-rf', 'x']]);
    expect(bash.analyze('echo a \\\n b').plain).toEqual([['echo', 'a', 'b']]);
  });

  it('treats an empty or whitespace-only script as no commands, without crashing', () => {
    for (const script of ['', '   ', '\n\n', '\t']) {
      expect(bash.analyze(script)).toEqual({ parsed: true, plain: [], heredoc: null, commands: [] });
    }
  });
});

describe('anything else is not plain', () => {
  it.each([
    ['subshell', '(ls)'],
    ['nested subshell', 'ls || (pwd && echo hi)'],
    ['group', '{ ls; }'],
    ['redirection', 'ls > out.txt'],
    ['fd redirection', 'ls 2>&1'],
    ['input redirection', 'cat < in.txt'],
    ['background job', 'echo hi & echo bye'],
    ['command substitution', 'echo $(pwd)'],
    ['backticks', 'echo `pwd`'],
    ['variable', 'echo $HOME'],
    ['variable in double quotes', 'echo "hi $USER"'],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a bash parameter expansion, not a template
    ['braced variable', 'echo "${HOME}"'],
    ['arithmetic', 'echo $((1+2))'],
    ['process substitution', 'cat <(ls)'],
    ['assignment prefix', 'FOO=bar ls'],
    ['bare assignment', 'FOO=bar'],
    ['glob', 'ls *.py'],
    ['question-mark glob', 'ls file?.txt'],
    ['bracket glob', 'ls [ab].txt'],
    ['brace expansion', 'echo {a,b}'],
    ['brace sequence', 'echo a{1..3}'],
    ['ANSI-C string', "echo $'a\\nb'"],
    ['heredoc', "cat <<'EOF'\nhi\nEOF"],
    ['herestring', 'cat <<< hi'],
    ['if', 'if true; then ls; fi'],
    ['for loop', 'for f in a b; do echo $f; done'],
    ['function', 'f() { ls; }'],
    ['pipe stderr too', 'ls |& wc'],
    ['negation', '! ls'],
    ['trailing operator', 'ls &&'],
    ['leading operator', '&& ls'],
    ['double separator', 'ls ;; pwd'],
    ['empty pipeline segment', 'ls | | wc'],
    ['unterminated quote', "echo 'oops"],
  ])('%s: %j', (_name, script) => {
    expect(bash.analyze(script).plain).toBeNull();
  });
});

describe('heredoc scripts', () => {
  it('yield their single command for rule matching', () => {
    expect(bash.analyze("python3 <<'EOF'\nprint(1)\nEOF").heredoc).toEqual(['python3']);
    expect(bash.analyze('cat <<EOF\nplain text\nEOF').heredoc).toEqual(['cat']);
  });

  it.each([
    ['a file redirect as well', "cat <<'EOF' > /tmp/out.txt\nhi\nEOF"],
    ['a second command', "cat <<'EOF' && rm x\nhi\nEOF"],
    ['a substitution in the body', 'cat <<EOF\n$(rm -rf /)\nEOF'],
    ['an expanded argument', 'cat $FILE <<EOF\nx\nEOF'],
  ])('yield nothing with %s', (_name, script) => {
    expect(bash.analyze(script).heredoc).toBeNull();
  });

  it('are not plain', () => {
    expect(bash.analyze("cat <<'EOF'\nhi\nEOF").plain).toBeNull();
  });
});

describe('literal commands are found anywhere in a script', () => {
  const words = (script: string) => bash.analyze(script).commands.map((command) => command.words);

  it('inside substitutions, subshells, loops and redirections', () => {
    expect(words('echo "$(rm -rf /tmp/x)"')).toEqual([
      ['echo', null],
      ['rm', '-rf', '/tmp/x'],
    ]);
    expect(words('(cd /tmp && git push)')).toEqual([
      ['cd', '/tmp'],
      ['git', 'push'],
    ]);
    expect(words('for t in a b; do rm -f "$t"; done')).toEqual([['rm', '-f', null]]);
    expect(words('FOO=1 rm -rf "$T" >/dev/null')).toEqual([['rm', '-rf', null]]);
    expect(words('cat <(git log)')).toEqual([
      ['cat', null],
      ['git', 'log'],
    ]);
  });

  it('skips commands whose name the shell computes', () => {
    expect(words('cmd=rm; $cmd -rf /')).toEqual([]);
  });

  it('keeps the source text for messages', () => {
    expect(bash.analyze('rm -rf "$T"').commands[0]!.display).toEqual(['rm', '-rf', '"$T"']);
  });

  it('still scans a script with a syntax error, since bash runs what precedes it', () => {
    const analysis = bash.analyze('rm -rf /tmp/x; if then');
    expect(analysis.parsed).toBe(false);
    expect(analysis.plain).toBeNull();
    expect(analysis.commands.map((command) => command.words)).toContainEqual(['rm', '-rf', '/tmp/x']);
  });
});
