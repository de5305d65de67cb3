// The reviewer chain as configured in config.toml and requirements.toml, through the shipped `ux`:
// `[[hooks.permission_request]]` commands answer before anyone else, and `approvals_reviewer =
// "auto_review"` sends questions to the `[auto_review]` command instead of the person. `ux exec` runs in
// a real terminal (a person is there, and must not be asked); `ux mcp` is driven by the MCP SDK's client
// without elicitation (a question that reached the user would be refused as unattended).
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { useLeakCheck } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import {
  connectMcp,
  makeHome,
  runUx,
  startUxInTerminal,
  type UxHome,
  warmUpTerminalSpawner,
} from './cli-harness.js';

await warmUpTerminalSpawner();
useLeakCheck();

const ASKED = '(Ctrl-C aborts)';
const HOOK_DENIAL = 'touch is refused by the test hook';
const REVIEW_DENIAL = 'the test reviewer refuses touch';

/** A script that records the question it got in `<name>.json` and prints `answer` (or sleeps). */
function script(home: UxHome, name: string, answer: string | 'sleep'): string {
  const path = join(home.home, `${name}.sh`);
  const body =
    answer === 'sleep'
      ? `#!/bin/sh\ncat > '${join(home.home, `${name}.json`)}'\nsleep 30\n`
      : `#!/bin/sh\ncat > '${join(home.home, `${name}.json`)}'\nprintf '%s\\n' '${answer}'\n`;
  writeFileSync(path, body);
  chmodSync(path, 0o755);
  return path;
}

const ALLOW = '{"decision":"allow"}';
const HOOK_DENY = `{"decision":"deny","message":"${HOOK_DENIAL}"}`;
const REVIEW_DENY = `{"decision":"deny","message":"${REVIEW_DENIAL}"}`;

const ASK = '{"decision":"ask"}';

type Answer = typeof ALLOW | typeof ASK | typeof HOOK_DENY | typeof REVIEW_DENY | 'sleep';

/**
 * A home where `touch` needs approval (a `prompt` rule, approval policy on-request, no sandbox so that
 * only the chain is tested), with a hook or an automatic reviewer that gives `answer`.
 */
function chainHome(kind: 'hook' | 'auto_review', answer: Answer, extra: { requirements?: string } = {}) {
  const home = makeHome(extra.requirements === undefined ? {} : { requirements: extra.requirements });
  mkdirSync(join(home.home, 'rules'));
  writeFileSync(
    join(home.home, 'rules', 'touch.rules'),
    'prefix_rule(pattern = ["touch"], decision = "prompt", justification = "touch needs approval")\n',
  );
  const path = script(home, kind, answer);
  const timeout = answer === 'sleep' ? 1 : 20;
  const lines = ['approval_policy = "on-request"', 'sandbox_mode = "danger-full-access"'];
  if (kind === 'hook')
    lines.push(
      '[[hooks.permission_request]]',
      `command = ["${path}"]`,
      `timeout = ${timeout}`,
      'name = "test-hook"',
    );
  else
    lines.push(
      'approvals_reviewer = "auto_review"',
      '[auto_review]',
      `command = ["${path}"]`,
      `timeout = ${timeout}`,
      'name = "test-reviewer"',
    );
  writeFileSync(home.config, `${lines.join('\n')}\n`);
  return { home, question: () => JSON.parse(readFileSync(join(home.home, `${kind}.json`), 'utf8')) };
}

const touched = (home: UxHome) => existsSync(join(home.workspace, 'touched.txt'));

async function execInTerminal(home: UxHome) {
  const ux = await startUxInTerminal(['exec', '--receipt', '--', 'touch touched.txt'], home);
  const code = await ux.exitCode(20_000);
  return { code, screen: ux.screen };
}

async function execOverMcp(home: UxHome) {
  const client = await connectMcp(home);
  const result = await client.callTool({ name: 'exec_command', arguments: { cmd: 'touch touched.txt' } });
  return ((result.content as { text: string }[]) ?? []).map((part) => part.text).join('');
}

describe.each([
  ['ux exec (terminal)', async (home: UxHome) => (await execInTerminal(home)).screen],
  ['ux mcp', execOverMcp],
] as const)('%s: permission hooks from config.toml', (_name, run) => {
  it('a hook that allows runs the command without asking anyone', async () => {
    const { home, question } = chainHome('hook', ALLOW);
    const shown = await run(home);
    expect(shown).not.toContain(ASKED);
    expect(shown).not.toContain('no one could be asked');
    expect(touched(home)).toBe(true);
    expect(question()).toMatchObject({ tool: 'Bash', command: 'touch touched.txt', phase: 'initial' });
  });

  it('a hook that denies stops the command, and the receipt gives its reason', async () => {
    const { home, question } = chainHome('hook', HOOK_DENY);
    const shown = await run(home);
    expect(shown).toContain(HOOK_DENIAL);
    expect(shown).not.toContain(ASKED);
    expect(touched(home)).toBe(false);
    expect(question().command).toBe('touch touched.txt');
  });

  it('a hook that does not answer in time denies (hooks fail closed)', async () => {
    const { home } = chainHome('hook', 'sleep');
    const started = Date.now();
    const shown = await run(home);
    expect(shown).toContain(
      'permission hook "test-hook" did not answer within 1000 ms; the command was not run',
    );
    expect(touched(home)).toBe(false);
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});

describe.each([
  ['ux exec (terminal)', async (home: UxHome) => (await execInTerminal(home)).screen],
  ['ux mcp', execOverMcp],
] as const)('%s: approvals_reviewer = "auto_review"', (_name, run) => {
  it('the automatic reviewer approves: the command runs and the person is not asked', async () => {
    const { home, question } = chainHome('auto_review', ALLOW);
    const shown = await run(home);
    expect(shown).not.toContain(ASKED);
    expect(touched(home)).toBe(true);
    expect(question()).toMatchObject({
      display_command: 'touch touched.txt',
      policy_reason: '`touch touched.txt` requires approval: touch needs approval',
      available_decisions: expect.arrayContaining(['approved', 'denied']),
    });
  });

  it('the automatic reviewer denies: the command does not run, and its rationale is given', async () => {
    const { home } = chainHome('auto_review', REVIEW_DENY);
    const shown = await run(home);
    expect(shown).toContain(`rejected by the automatic reviewer "test-reviewer": ${REVIEW_DENIAL}`);
    expect(shown).not.toContain(ASKED);
    expect(touched(home)).toBe(false);
  });

  it('an automatic reviewer that does not answer in time is a timeout, not a judgement', async () => {
    const { home } = chainHome('auto_review', 'sleep');
    const shown = await run(home);
    expect(shown).toContain('the automatic reviewer did not decide in time');
    expect(touched(home)).toBe(false);
  });
});

describe('ux exec (terminal): a hook that leaves it to the reviewers', () => {
  it('answers ask: the person is asked next, and their yes runs the command', async () => {
    const { home, question } = chainHome('hook', ASK);
    const ux = await startUxInTerminal(['exec', '--receipt', '--', 'touch touched.txt'], home);
    await ux.waitFor(ASKED);
    expect(question().command).toBe('touch touched.txt');
    expect(touched(home)).toBe(false);
    await ux.type('y');
    expect(await ux.exitCode(20_000)).toBe(0);
    expect(touched(home)).toBe(true);
  });
});

describe('[auto_review] strict = true', () => {
  it('sends even a command that runs without asking to the automatic reviewer, whose denial stops it', async () => {
    const home = makeHome();
    const reviewer = script(home, 'auto_review', '{"decision":"deny","message":"no echo in strict mode"}');
    const hook = script(home, 'hook', ALLOW);
    writeFileSync(
      home.config,
      [
        'approval_policy = "on-request"',
        'sandbox_mode = "danger-full-access"',
        '[[hooks.permission_request]]',
        `command = ["${hook}"]`,
        '[auto_review]',
        `command = ["${reviewer}"]`,
        'name = "test-reviewer"',
        'strict = true',
        '',
      ].join('\n'),
    );
    const result = await runUx(['exec', '--', 'echo', 'hi'], home);
    const shown = result.stdout + result.stderr;
    expect(result.status).not.toBe(0);
    expect(shown).toContain('rejected by the automatic reviewer "test-reviewer": no echo in strict mode');
    expect(shown).not.toMatch(/^hi$/m);
    expect(JSON.parse(readFileSync(join(home.home, 'auto_review.json'), 'utf8'))).toMatchObject({
      display_command: 'echo hi',
      policy_reason: 'strict automatic review: every command goes to the automatic reviewer',
      retry: false,
    });
    // Strict review skips the permission hooks (this one would have allowed it).
    expect(existsSync(join(home.home, 'hook.json'))).toBe(false);

    const doctor = await runUx(['doctor', '--json'], home);
    const checks = (JSON.parse(doctor.stdout) as { checks: { name: string; detail: string }[] }).checks;
    expect(checks.find((check) => check.name === 'automatic reviewer')?.detail).toContain(
      `(${home.config}:5:2); strict (${home.config}:8:1): every command`,
    );
  });
});

describe('managed requirements and ux doctor', () => {
  it('a required hook runs before the user’s and its denial wins', async () => {
    const admin = makeHome();
    const deny = script(admin, 'required', `{"decision":"deny","message":"the administrator forbids touch"}`);
    const { home } = chainHome('hook', ALLOW, {
      requirements: `[[hooks.permission_request]]\ncommand = ["${deny}"]\nname = "admin"\n`,
    });
    const shown = await execOverMcp(home);
    expect(shown).toContain('the administrator forbids touch');
    expect(touched(home)).toBe(false);
  });

  it('pinned to the automatic reviewer, a config choosing the user is refused at file:line', async () => {
    const { home } = chainHome('auto_review', ALLOW, {
      requirements: 'allowed_approvals_reviewers = ["auto_review"]\n',
    });
    writeFileSync(home.config, `${readFileSync(home.config, 'utf8').replace('"auto_review"', '"user"')}`);
    const result = await runUx(['exec', '--', 'touch touched.txt'], home);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(
      `${home.requirements}:1:1: approvals reviewer "user" (from ${home.config}:3:1) is not allowed here`,
    );
    expect(touched(home)).toBe(false);
  });

  it('a bad hook entry is a configuration error naming file:line', async () => {
    const home = makeHome({
      config: '[[hooks.permission_request]]\ncommand = ["/bin/true"]\ntimeout = 9000\n',
    });
    const result = await runUx(['exec', '--', 'true'], home);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(
      `${home.config}:3:1: hooks.permission_request[0].timeout must be a number of seconds greater than 0 and at most 600, got 9000`,
    );
  });

  it('ux doctor lists the hooks and the reviewer with where each came from', async () => {
    const admin = makeHome();
    const required = script(admin, 'required', ALLOW);
    const { home } = chainHome('auto_review', ALLOW, {
      requirements: `[[hooks.permission_request]]\ncommand = ["${required}"]\nname = "admin"\n`,
    });
    const result = await runUx(['doctor', '--json'], home);
    const checks = (
      JSON.parse(result.stdout) as { checks: { name: string; status: string; detail: string }[] }
    ).checks;
    const byName = (name: string) => checks.find((check) => check.name === name);
    expect(byName('permission hook 1')).toMatchObject({
      status: 'ok',
      detail: `"admin" ["${required}"], timeout 30 s (${home.requirements}:1:3, required by the managed requirements)`,
    });
    expect(byName('approvals reviewer')).toMatchObject({
      status: 'ok',
      detail: `auto_review (${home.config}:3:1)`,
    });
    expect(byName('automatic reviewer')?.detail).toContain(
      `"test-reviewer" ["${join(home.home, 'auto_review.sh')}"], timeout 20 s (${home.config}:4:2)`,
    );
  });
});
