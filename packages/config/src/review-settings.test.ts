import { ConfigError } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { applyConfigOverrides } from './apply-config-overrides.js';
import { parseConfigOverride } from './parse-config-override.js';
import { parseRequirements } from './requirements.js';
import { resolveReviewSettings } from './resolve-review-settings.js';
import { parseTomlDocument } from './toml-document.js';
import { parseUserConfig } from './user-config.js';

const FILE = '/home/dev/.ux/config.toml';
const REQ = '/etc/ux/requirements.toml';

const userConfig = (text: string, overrides: string[] = []) =>
  parseUserConfig(
    overrides.length === 0
      ? parseTomlDocument(text, FILE)
      : applyConfigOverrides(parseTomlDocument(text, FILE), overrides.map(parseConfigOverride), FILE),
  );
const requirements = (text: string) => parseRequirements(parseTomlDocument(text, REQ));

function errorOf(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    if (ConfigError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('[[hooks.permission_request]] and [auto_review] in config.toml', () => {
  it('reads hooks in order, with their timeouts in ms, names and table positions', () => {
    const config = userConfig(
      [
        'approval_policy = "on-request"',
        '[[hooks.permission_request]]',
        'command = ["/usr/local/bin/check", "--strict"]',
        'timeout = 5',
        'name = "check"',
        '',
        '[[hooks.permission_request]]',
        'command = ["node", "/opt/hook.mjs"]',
        'timeout = 0.5',
        '',
      ].join('\n'),
    );
    expect(config.review.hooks).toEqual([
      {
        command: ['/usr/local/bin/check', '--strict'],
        timeoutMs: 5000,
        name: 'check',
        location: { file: FILE, line: 2, column: 3 },
      },
      { command: ['node', '/opt/hook.mjs'], timeoutMs: 500, location: { file: FILE, line: 7, column: 3 } },
    ]);
    expect(config.review.autoReview).toBeUndefined();
    expect(config.review.approvalsReviewer).toBeUndefined();
  });

  it('reads approvals_reviewer and [auto_review], with the default timeout of 60 s', () => {
    const config = userConfig(
      'approvals_reviewer = "auto_review"\n[auto_review]\ncommand = ["/opt/review"]\nname = "bot"\n',
    );
    expect(config.review.approvalsReviewer).toEqual({
      value: 'auto_review',
      location: { file: FILE, line: 1, column: 1 },
    });
    expect(config.review.autoReview).toEqual({
      command: ['/opt/review'],
      timeoutMs: 60_000,
      name: 'bot',
      location: { file: FILE, line: 2, column: 2 },
    });
    expect(userConfig('[[hooks.permission_request]]\ncommand = ["x"]\n').review.hooks[0]?.timeoutMs).toBe(
      30_000,
    );
  });

  it.each([
    [
      '[[hooks.permission_request]]\ncommand = []\n',
      2,
      'hooks.permission_request[0].command must be a non-empty array of strings',
    ],
    [
      '[[hooks.permission_request]]\ncommand = "check.sh"\n',
      2,
      'must be a non-empty array of strings (the program and its arguments, run without a shell), got "check.sh"',
    ],
    [
      '[[hooks.permission_request]]\ncommand = ["a", 1]\n',
      2,
      'hooks.permission_request[0].command[1] must be a non-empty string, got 1',
    ],
    ['[[hooks.permission_request]]\ncommand = ["a", ""]\n', 2, 'command[1] must be a non-empty string'],
    [
      '[[hooks.permission_request]]\ntimeout = 3\n',
      1,
      'hooks.permission_request[0] needs command = ["program", "arg", …]',
    ],
    [
      '[[hooks.permission_request]]\ncommand = ["a"]\ntimeout = 0\n',
      3,
      'hooks.permission_request[0].timeout must be a number of seconds greater than 0 and at most 600, got 0',
    ],
    ['[[hooks.permission_request]]\ncommand = ["a"]\ntimeout = 601\n', 3, 'at most 600, got 601'],
    ['[[hooks.permission_request]]\ncommand = ["a"]\ntimeout = "10s"\n', 3, 'got "10s"'],
    [
      '[[hooks.permission_request]]\ncommand = ["a"]\nname = ""\n',
      3,
      'hooks.permission_request[0].name must be a non-empty string',
    ],
    [
      '[[hooks.permission_request]]\ncommand = ["a"]\nmatcher = "Bash"\n',
      3,
      'unknown key hooks.permission_request[0].matcher; known keys here: command, timeout, name',
    ],
    [
      '[[hooks.permission_request]]\ncommand = ["a"]\ntimout = 3\n',
      3,
      'unknown key hooks.permission_request[0].timout (did you mean "timeout"?)',
    ],
    [
      '[hooks.permission_request]\ncommand = ["a"]\n',
      1,
      'write each hook as [[hooks.permission_request]] (two brackets)',
    ],
    [
      '[[hooks.pre_tool_use]]\ncommand = ["a"]\n',
      1,
      'unknown key hooks.pre_tool_use; known keys here: permission_request',
    ],
    ['hooks = 3\n', 1, 'hooks must be a table of hook lists'],
    [
      'approvals_reviewer = "auto"\n',
      1,
      'approvals_reviewer must be one of "user", "auto_review", got "auto" (did you mean "auto_review"?)',
    ],
    ['auto_review = ["a"]\n', 1, 'auto_review must be a table'],
    [
      '[auto_review]\ncommand = ["a"]\ntimeout = -1\n',
      3,
      'auto_review.timeout must be a number of seconds greater than 0',
    ],
  ])('%j is refused at line %i', (text, line, reason) => {
    const error = errorOf(() => userConfig(text));
    expect(error.file).toBe(FILE);
    expect(error.line).toBe(line);
    expect(error.message).toContain(reason);
  });

  it('reads [auto_review] strict, alone or beside the command', () => {
    const config = userConfig('[auto_review]\ncommand = ["/opt/review"]\nstrict = true\n');
    expect(config.review.autoReviewStrict).toEqual({
      value: true,
      location: { file: FILE, line: 3, column: 1 },
    });
    expect(config.review.autoReview).toEqual({
      command: ['/opt/review'],
      timeoutMs: 60_000,
      location: { file: FILE, line: 1, column: 2 },
    });
    const alone = userConfig('[auto_review]\nstrict = false\n');
    expect(alone.review.autoReviewStrict?.value).toBe(false);
    expect(alone.review.autoReview).toBeUndefined();
    expect(userConfig('[auto_review]\ncommand = ["/opt/review"]\n').review.autoReviewStrict).toBeUndefined();
    expect(
      userConfig('', ['auto_review.command=["/opt/review"]', 'auto_review.strict=true']).review
        .autoReviewStrict?.value,
    ).toBe(true);
  });

  it.each([
    [
      '[auto_review]\ncommand = ["a"]\nstrict = "yes"\n',
      3,
      'auto_review.strict must be true or false, got "yes"',
    ],
    ['[auto_review]\nstrict = 1\n', 2, 'auto_review.strict must be true or false, got 1'],
    [
      '[auto_review]\ncommand = ["a"]\nstrct = true\n',
      3,
      'unknown key auto_review.strct (did you mean "strict"?)',
    ],
    ['[auto_review]\nstrict = true\ntimeout = 5\n', 1, 'auto_review needs command = ["program", "arg", …]'],
    [
      '[[hooks.permission_request]]\ncommand = ["a"]\nstrict = true\n',
      3,
      'unknown key hooks.permission_request[0].strict; strict is a setting of [auto_review] only; known keys here: command, timeout, name',
    ],
  ])('strict: %j is refused at line %i', (text, line, reason) => {
    const error = errorOf(() => userConfig(text));
    expect(error.file).toBe(FILE);
    expect(error.line).toBe(line);
    expect(error.message).toContain(reason);
  });

  it('takes approvals_reviewer and a hook from -c overrides', () => {
    const config = userConfig('', [
      'approvals_reviewer="auto_review"',
      'auto_review.command=["/opt/review"]',
      'hooks.permission_request=[{command=["/opt/hook"], timeout=2}]',
    ]);
    expect(config.review.approvalsReviewer?.value).toBe('auto_review');
    expect(config.review.autoReview?.command).toEqual(['/opt/review']);
    expect(config.review.hooks.map((hook) => [hook.command, hook.timeoutMs])).toEqual([
      [['/opt/hook'], 2000],
    ]);
  });
});

describe('the reviewer chain with managed requirements', () => {
  it('defaults to the user with no hooks and no automatic reviewer', () => {
    expect(resolveReviewSettings({})).toEqual({
      hooks: [],
      approvalsReviewer: { value: 'user', source: 'default' },
      strict: { value: false, source: 'default' },
      approvalsVia: { value: 'client-then-inbox', source: 'default', pinned: false },
      approvalTimeoutS: { value: null, source: 'default', pinned: false },
    });
  });

  it('runs the required hooks first; the config can add hooks but not remove them', () => {
    const managed = requirements(
      '[[hooks.permission_request]]\ncommand = ["/etc/ux/audit"]\nname = "audit"\n',
    );
    const user = userConfig('[[hooks.permission_request]]\ncommand = ["/home/dev/mine"]\n');
    const resolved = resolveReviewSettings({ user, requirements: managed });
    expect(resolved.hooks.map(({ command, managed, source }) => ({ command, managed, source }))).toEqual([
      { command: ['/etc/ux/audit'], managed: true, source: `${REQ}:1:3` },
      { command: ['/home/dev/mine'], managed: false, source: `${FILE}:1:3` },
    ]);
    // A config with no hooks (or -c hooks.permission_request=[]) still gets the required one.
    const cleared = userConfig('', ['hooks.permission_request=[]']);
    expect(resolveReviewSettings({ user: cleared, requirements: managed }).hooks).toHaveLength(1);
  });

  it('pins the automatic reviewer: the default becomes auto_review, a config asking for the user is refused', () => {
    const managed = requirements(
      'allowed_approvals_reviewers = ["auto_review"]\n[auto_review]\ncommand = ["/etc/ux/review"]\ntimeout = 20\n',
    );
    const resolved = resolveReviewSettings({ requirements: managed });
    expect(resolved.approvalsReviewer).toEqual({ value: 'auto_review', source: `${REQ}:1:1` });
    expect(resolved.autoReview).toMatchObject({
      command: ['/etc/ux/review'],
      timeoutMs: 20_000,
      managed: true,
      source: `${REQ}:2:2`,
    });
    const error = errorOf(() =>
      resolveReviewSettings({ user: userConfig('\napprovals_reviewer = "user"\n'), requirements: managed }),
    );
    expect(error.message).toBe(
      `${REQ}:1:1: approvals reviewer "user" (from ${FILE}:2:1) is not allowed here: allowed_approvals_reviewers = ["auto_review"]`,
    );
  });

  it('refuses a user [auto_review] when the requirements define one, naming both places', () => {
    const managed = requirements('[auto_review]\ncommand = ["/etc/ux/review"]\n');
    const error = errorOf(() =>
      resolveReviewSettings({
        user: userConfig('[auto_review]\ncommand = ["/mine"]\n'),
        requirements: managed,
      }),
    );
    expect(error.file).toBe(FILE);
    expect(error.line).toBe(1);
    expect(error.message).toContain(`set by the managed requirements at ${REQ}:1:2`);
  });

  it('refuses auto_review without a reviewer command, at the line that chose it', () => {
    const error = errorOf(() =>
      resolveReviewSettings({
        user: userConfig('sandbox_mode = "read-only"\napprovals_reviewer = "auto_review"\n'),
      }),
    );
    expect(error.file).toBe(FILE);
    expect(error.line).toBe(2);
    expect(error.message).toContain('needs an automatic reviewer: add an [auto_review] table');
    const pinned = requirements('allowed_approvals_reviewers = ["auto_review"]\n');
    const managedError = errorOf(() => resolveReviewSettings({ requirements: pinned }));
    expect(managedError.file).toBe(REQ);
    expect(managedError.line).toBe(1);
  });

  it('strict review comes from the config, defaults to off, and needs a reviewer command', () => {
    const on = resolveReviewSettings({
      user: userConfig('[auto_review]\ncommand = ["/opt/review"]\nstrict = true\n'),
    });
    expect(on.strict).toEqual({ value: true, source: `${FILE}:3:1` });
    expect(on.autoReview?.command).toEqual(['/opt/review']);
    // Strict does not need approvals_reviewer = "auto_review": it sends every approval there anyway.
    expect(on.approvalsReviewer.value).toBe('user');
    expect(
      resolveReviewSettings({ user: userConfig('[auto_review]\ncommand = ["/opt/review"]\n') }).strict,
    ).toEqual({ value: false, source: 'default' });

    const error = errorOf(() =>
      resolveReviewSettings({
        user: userConfig('sandbox_mode = "read-only"\n[auto_review]\nstrict = true\n'),
      }),
    );
    expect(error.file).toBe(FILE);
    expect(error.line).toBe(3);
    expect(error.message).toContain(
      `auto_review.strict = true (from ${FILE}:3:1) needs an automatic reviewer: add command = ["program", "arg"] to the [auto_review] table`,
    );
  });

  it('requirements pin strict = true: a config cannot turn it off, and may supply the reviewer', () => {
    const managed = requirements('[auto_review]\nstrict = true\n');
    expect(managed.review.autoReview).toBeUndefined();
    const resolved = resolveReviewSettings({
      user: userConfig('[auto_review]\ncommand = ["/home/dev/review"]\n'),
      requirements: managed,
    });
    expect(resolved.strict).toEqual({ value: true, source: `${REQ}:2:1` });
    expect(resolved.autoReview).toMatchObject({ command: ['/home/dev/review'], managed: false });

    const off = errorOf(() =>
      resolveReviewSettings({
        user: userConfig('[auto_review]\ncommand = ["/home/dev/review"]\nstrict = false\n'),
        requirements: managed,
      }),
    );
    expect(off.message).toBe(
      `${REQ}:2:1: auto_review.strict = false (from ${FILE}:3:1) is not allowed here: the managed requirements pin auto_review.strict = true, and a user config cannot turn it off; remove strict = false`,
    );
    // Also when the requirements define the reviewer too, and through -c.
    const withCommand = requirements('[auto_review]\ncommand = ["/etc/ux/review"]\nstrict = true\n');
    expect(resolveReviewSettings({ requirements: withCommand }).strict.value).toBe(true);
    expect(
      errorOf(() =>
        resolveReviewSettings({
          user: userConfig('', ['auto_review.strict=false']),
          requirements: withCommand,
        }),
      ).message,
    ).toContain('a user config cannot turn it off');

    // Pinned with no reviewer anywhere: refused at the requirements' line.
    const missing = errorOf(() => resolveReviewSettings({ requirements: managed }));
    expect(missing.file).toBe(REQ);
    expect(missing.line).toBe(2);
    expect(missing.message).toContain('needs an automatic reviewer');
  });

  it('requirements with strict = false pin nothing, and a config may add strict to their reviewer', () => {
    const relaxed = requirements('[auto_review]\ncommand = ["/etc/ux/review"]\nstrict = false\n');
    expect(resolveReviewSettings({ requirements: relaxed }).strict).toEqual({
      value: false,
      source: `${REQ}:3:1`,
    });
    const resolved = resolveReviewSettings({
      user: userConfig('[auto_review]\nstrict = true\n'),
      requirements: relaxed,
    });
    expect(resolved.strict).toEqual({ value: true, source: `${FILE}:2:1` });
    expect(resolved.autoReview).toMatchObject({ command: ['/etc/ux/review'], managed: true });
    expect(errorOf(() => requirements('[auto_review]\nstrict = "on"\n')).message).toContain(
      `${REQ}:2:1: auto_review.strict must be true or false, got "on"`,
    );
  });

  it('checks the requirements file itself', () => {
    expect(errorOf(() => requirements('allowed_approvals_reviewers = ["robot"]\n')).message).toContain(
      'allowed_approvals_reviewers[0]: unknown value "robot"; expected one of user, auto_review',
    );
    expect(errorOf(() => requirements('approvals_reviewer = "user"\n')).message).toContain(
      'unknown key approvals_reviewer',
    );
    expect(
      errorOf(() => requirements('[[hooks.permission_request]]\ncommand = ["a"]\ntimeout = 1000\n')).line,
    ).toBe(3);
  });
});

describe('approvals_via and approval_timeout_s', () => {
  it('reads both from config.toml, with where they were written', () => {
    const resolved = resolveReviewSettings({
      user: userConfig('approval_policy = "on-request"\napprovals_via = "inbox"\napproval_timeout_s = 90\n'),
    });
    expect(resolved.approvalsVia).toEqual({ value: 'inbox', source: `${FILE}:2:1`, pinned: false });
    expect(resolved.approvalTimeoutS).toEqual({ value: 90, source: `${FILE}:3:1`, pinned: false });
  });

  it('takes -c overrides', () => {
    const resolved = resolveReviewSettings({ user: userConfig('', ['approvals_via="client"']) });
    expect(resolved.approvalsVia.value).toBe('client');
  });

  it('refuses an unknown route with a hint, at file:line', () => {
    const error = errorOf(() => userConfig('approvals_via = "inbx"\n'));
    expect(error.message).toContain(`${FILE}:1:1`);
    expect(error.message).toContain('approvals_via must be one of "client", "inbox", "client-then-inbox"');
    expect(error.message).toContain('"inbox"?');
  });

  it.each([
    ['0', '0'],
    ['-5', '-5'],
    ['1.5', '1.5'],
    ['"30"', '"30"'],
    ['86401', '86401'],
  ])('refuses approval_timeout_s = %s', (written, shown) => {
    const error = errorOf(() => userConfig(`approval_timeout_s = ${written}\n`));
    expect(error.message).toContain(`${FILE}:1:1`);
    expect(error.message).toContain('approval_timeout_s must be a whole number of seconds from 1 to 86400');
    expect(error.message).toContain(shown);
  });

  it('a value pinned in the requirements wins, and a different user value is an error at its line', () => {
    const managed = requirements('approvals_via = "inbox"\napproval_timeout_s = 300\n');
    expect(resolveReviewSettings({ requirements: managed }).approvalsVia).toEqual({
      value: 'inbox',
      source: `${REQ}:1:1`,
      pinned: true,
    });
    expect(resolveReviewSettings({ requirements: managed }).approvalTimeoutS).toEqual({
      value: 300,
      source: `${REQ}:2:1`,
      pinned: true,
    });
    // The same value is no change.
    const same = userConfig('approvals_via = "inbox"\n');
    expect(resolveReviewSettings({ user: same, requirements: managed }).approvalsVia.pinned).toBe(true);
    const changed = userConfig('\napprovals_via = "client"\n');
    const error = errorOf(() => resolveReviewSettings({ user: changed, requirements: managed }));
    expect(error.message).toContain(`${FILE}:2:1`);
    expect(error.message).toContain(`the managed requirements pin approvals_via = "inbox" at ${REQ}:1:1`);
    const timeout = errorOf(() =>
      resolveReviewSettings({ user: userConfig('approval_timeout_s = 5\n'), requirements: managed }),
    );
    expect(timeout.message).toContain('pin approval_timeout_s = 300');
  });

  it('refuses a bad value in the requirements too', () => {
    const error = errorOf(() => requirements('approvals_via = 3\n'));
    expect(error.message).toContain(`${REQ}:1:1`);
  });
});
