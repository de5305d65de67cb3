import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '@ux/protocol';
import { tempDir } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { createExecPolicy } from './exec-policy.js';
import { listRuleFiles, loadRuleFiles } from './load-rule-files.js';
import { parseRulesFile } from './parse-rules-file.js';
import { prefixRuleFromConfig } from './prefix-rule-from-config.js';
import { createRuleFileAppender } from './rule-file-appender.js';

const policyOf = (text: string) => createExecPolicy(parseRulesFile(text, 'test.rules'));
const decisions = (text: string, words: (string | null)[]) =>
  policyOf(text)
    .matches(words)
    .map((match) => [match.rule.decision, match.matchedPrefix]);

describe('prefix matching', () => {
  const rules = `prefix_rule(pattern=["git", ["push", "fetch"]], decision="forbidden")
prefix_rule(pattern=["git"], decision="prompt")
prefix_rule(pattern=[["npm", "pnpm"], "test"], decision="allow")`;

  it('matches every rule whose pattern starts the command, with the words it matched', () => {
    expect(decisions(rules, ['git', 'push', 'origin'])).toEqual([
      ['forbidden', ['git', 'push']],
      ['prompt', ['git']],
    ]);
    expect(decisions(rules, ['git', 'fetch'])).toEqual([
      ['forbidden', ['git', 'fetch']],
      ['prompt', ['git']],
    ]);
    expect(decisions(rules, ['pnpm', 'test', '--watch'])).toEqual([['allow', ['pnpm', 'test']]]);
  });

  it('needs the whole pattern, in order, and never matches expanded words', () => {
    expect(decisions(rules, ['git', 'pull'])).toEqual([['prompt', ['git']]]);
    expect(decisions(rules, ['npm'])).toEqual([]);
    expect(decisions(rules, ['test', 'npm'])).toEqual([]);
    expect(decisions(rules, ['git', null])).toEqual([['prompt', ['git']]]);
    expect(decisions(rules, [null, 'push'])).toEqual([]);
    expect(decisions(rules, [])).toEqual([]);
  });

  it('applies the rules of a program name to an absolute path, but allow rules only for declared paths', () => {
    expect(decisions(rules, ['/usr/bin/git', 'push'])).toEqual([
      ['forbidden', ['/usr/bin/git', 'push']],
      ['prompt', ['/usr/bin/git']],
    ]);
    expect(decisions(rules, ['/tmp/evil/npm', 'test'])).toEqual([]);
    expect(decisions(rules, ['./git', 'push'])).toEqual([]);
    const declared = `${rules}\nhost_executable(name="npm", paths=["/usr/bin/npm"])`;
    expect(decisions(declared, ['/usr/bin/npm', 'test'])).toEqual([['allow', ['/usr/bin/npm', 'test']]]);
    expect(decisions(declared, ['/tmp/evil/npm', 'test'])).toEqual([]);
  });

  it('matches a rule written for the absolute path once, even when its name matches too', () => {
    const both = 'prefix_rule(pattern=[["/usr/bin/git", "git"], "log"], decision="prompt")';
    expect(decisions(both, ['/usr/bin/git', 'log'])).toEqual([['prompt', ['/usr/bin/git', 'log']]]);
  });

  it('grows by withRule without changing the original', () => {
    const original = policyOf(rules);
    const amended = original.withRule({
      pattern: ['cargo', 'build'],
      decision: 'allow',
      source: { file: 'x' },
    });
    expect(amended.matches(['cargo', 'build'])).toHaveLength(1);
    expect(original.matches(['cargo', 'build'])).toHaveLength(0);
    expect(amended.rules).toHaveLength(4);
  });

  it('merges rule sets; a later host_executable for a name replaces an earlier one', () => {
    const merged = createExecPolicy(
      parseRulesFile('host_executable(name="git", paths=["/a/git"])', 'a.rules'),
      parseRulesFile('host_executable(name="git", paths=["/b/git"])\nprefix_rule(pattern=["ls"])', 'b.rules'),
    );
    expect(merged.hostExecutables.get('git')).toEqual(['/b/git']);
    expect(merged.rules).toHaveLength(1);
  });
});

describe('rules from config', () => {
  const source = { file: '/home/me/.ux/config.toml', line: 12 };

  it('are validated like rule-file rules and keep their source', () => {
    expect(
      prefixRuleFromConfig(
        { pattern: ['git', ['push', 'fetch']], decision: 'prompt', justification: 'ask' },
        source,
      ),
    ).toEqual({ pattern: ['git', ['push', 'fetch']], decision: 'prompt', justification: 'ask', source });
    expect(prefixRuleFromConfig({ pattern: ['ls'] }, { file: 'c.toml' }).decision).toBe('allow');
  });

  it.each([
    [['git'], 'a rule must be a table'],
    [null, 'a rule must be a table'],
    [
      { pattern: ['git'], justifcation: 'x' },
      'a rule has no key "justifcation" (did you mean "justification"?)',
    ],
    [{ pattern: [] }, 'pattern must not be empty'],
    [{ pattern: ['git', 3] }, 'got a number'],
    [{ pattern: ['git'], decision: 'deny' }, 'unknown decision "deny"'],
    [{ pattern: ['git'], decision: null }, 'decision must be a string, got null'],
    [{ decision: 'allow' }, 'prefix_rule needs a pattern'],
  ])('%j is refused at its source', (entry, reason) => {
    let error: unknown;
    try {
      prefixRuleFromConfig(entry, source);
    } catch (caught) {
      error = caught;
    }
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).reason).toContain(reason);
    expect((error as ConfigError).message.startsWith('/home/me/.ux/config.toml:12: ')).toBe(true);
  });
});

describe('rule files on disk', () => {
  it('lists *.rules files by name and loads them in order', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'b.rules'), 'prefix_rule(pattern=["b"])\n');
    writeFileSync(join(dir, 'a.rules'), 'prefix_rule(pattern=["a"], decision="prompt")\n');
    writeFileSync(join(dir, 'notes.txt'), 'not a rule file');
    const files = await listRuleFiles(dir);
    expect(files).toEqual([join(dir, 'a.rules'), join(dir, 'b.rules')]);
    const set = await loadRuleFiles(files);
    expect(set.rules.map((rule) => [rule.pattern, rule.source.file])).toEqual([
      [['a'], join(dir, 'a.rules')],
      [['b'], join(dir, 'b.rules')],
    ]);
  });

  it('has no rule files in a directory that does not exist', async () => {
    expect(await listRuleFiles(join(tempDir(), 'missing'))).toEqual([]);
  });

  it('names a file that cannot be read, and a file that does not parse', async () => {
    const dir = tempDir();
    await expect(loadRuleFiles([join(dir, 'gone.rules')])).rejects.toMatchObject({
      code: 'config_error',
      file: join(dir, 'gone.rules'),
      reason: expect.stringContaining('cannot read the rule file'),
    });
    writeFileSync(join(dir, 'bad.rules'), 'prefix_rule(pattern=["ok"])\nprefix_rule(pattern=[])\n');
    await expect(loadRuleFiles([join(dir, 'bad.rules')])).rejects.toMatchObject({
      message: `${join(dir, 'bad.rules')}:2:21: pattern must not be empty`,
    });
    await expect(listRuleFiles(join(dir, 'bad.rules'))).rejects.toMatchObject({ code: 'config_error' });
  });
});

describe('the rule-file appender', () => {
  it('appends allow rules that parse back, creating the directory, never twice', async () => {
    const path = join(tempDir(), 'rules', 'default.rules');
    const append = createRuleFileAppender(path);
    await append(['git', 'pull']);
    await Promise.all([append(['echo', 'Hello, "world"\n']), append(['git', 'pull'])]);
    expect(readFileSync(path, 'utf8')).toBe(
      'prefix_rule(pattern=["git", "pull"], decision="allow")\nprefix_rule(pattern=["echo", "Hello, \\"world\\"\\n"], decision="allow")\n',
    );
    const { rules } = parseRulesFile(readFileSync(path, 'utf8'), path);
    expect(rules.map((rule) => [rule.pattern, rule.decision])).toEqual([
      [['git', 'pull'], 'allow'],
      [['echo', 'Hello, "world"\n'], 'allow'],
    ]);
  });

  it('starts on a new line after a file without a final newline', async () => {
    const path = join(tempDir(), 'default.rules');
    writeFileSync(path, 'prefix_rule(pattern=["ls"], decision="allow")');
    await createRuleFileAppender(path)(['pwd']);
    expect(readFileSync(path, 'utf8')).toBe(
      'prefix_rule(pattern=["ls"], decision="allow")\nprefix_rule(pattern=["pwd"], decision="allow")\n',
    );
  });

  it('refuses an empty prefix and reports write failures', async () => {
    const dir = tempDir();
    await expect(createRuleFileAppender(join(dir, 'x.rules'))([])).rejects.toThrow('at least one word');
    writeFileSync(join(dir, 'file'), '');
    // The parent "directory" is a file: the write fails and says so; the next write still runs.
    const broken = createRuleFileAppender(join(dir, 'file', 'x.rules'));
    await expect(broken(['a'])).rejects.toThrow(/EEXIST|ENOTDIR/);
    await expect(broken(['b'])).rejects.toThrow(/EEXIST|ENOTDIR/);
  });
});
