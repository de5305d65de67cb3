// A command's words can never rewrite the screen or forge a line: the
// shipped `ux exec` in a real terminal (tmux, a terminal emulator whose screen we read back), `ux exec`
// with pipes, and `ux mcp` under the MCP SDK's own client. Each terminal check has a control: the same
// raw text printed straight to the same kind of terminal does forge the line (or set the title and
// clear the screen), so the check cannot pass just because the attack never worked.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { tempDir, useLeakCheck, zshForkPath } from '@ux/test-utils';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { BIN, makeHome, runUx, type UxHome } from './cli-harness.js';

useLeakCheck();

// Prints `  command: ls -la` over the real line: CR, erase the line, up one line (the question), erase
// it, then the forged text.
const FORGED = 'touch x #\r\x1b[2K\x1b[1A\x1b[2K  command: ls -la';
const FORGED_SHOWN = 'touch x #\\r\\e[2K\\e[1A\\e[2K  command: ls -la';
// Sets the terminal's title, clears the screen, puts the cursor home and prints a forged notice.
const TITLE_CLEAR = 'x\x1b]0;pwned\x07\x1b[2J\x1b[HSandbox: nothing ran outside the sandbox';
const TITLE_CLEAR_SHOWN = 'x\\e]0;pwned\\x07\\e[2J\\e[HSandbox: nothing ran outside the sandbox';
const RAW = /[\r\x07\x1b]/;

// Runs in the terminal: either ux (its exit code printed after it), or a raw text printed as it is;
// then waits, so the screen stays to be read.
const LAUNCHER = `
const { readFileSync } = require('node:fs');
const { spawnSync } = require('node:child_process');
const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
if (spec.raw !== undefined) process.stdout.write(spec.raw);
else {
  const run = spawnSync(process.execPath, spec.args, {
    stdio: 'inherit',
    cwd: spec.cwd,
    env: { ...spec.env, TERM: process.env.TERM },
  });
  process.stdout.write('[launcher: ux exited with ' + run.status + ']');
}
setInterval(() => {}, 60000);
`;

let tmuxRuns = 0;

/** A tmux server of its own with one 200×50 pane running `spec`; read its screen, type into it. */
function startInTmux(spec: { raw: string } | { args: string[]; home: UxHome; cwd?: string }) {
  const dir = tempDir('ux-visible-');
  writeFileSync(join(dir, 'launch.cjs'), LAUNCHER);
  const file = join(dir, 'spec.json');
  writeFileSync(
    file,
    JSON.stringify(
      'raw' in spec
        ? { raw: spec.raw }
        : { args: [BIN, ...spec.args], cwd: spec.cwd ?? spec.home.workspace, env: spec.home.env },
    ),
  );
  const socket = `ux-visible-${process.pid}-${++tmuxRuns}`;
  const tmux = (...args: string[]) =>
    execFileSync('tmux', ['-L', socket, '-f', '/dev/null', ...args], { encoding: 'utf8' });
  onTestFinished(() => {
    try {
      tmux('kill-server');
    } catch {
      // Already gone.
    }
  });
  tmux('new-session', '-d', '-s', 'main', '-x', '200', '-y', '50', `exec node ${dir}/launch.cjs ${file}`);
  const screen = () => tmux('capture-pane', '-p', '-t', 'main');
  return {
    screen,
    /** The pane's title, as an OSC 0/2 sequence would have set it. */
    title: () => tmux('display-message', '-p', '-t', 'main', '#{pane_title}').trim(),
    type: (keys: string) => tmux('send-keys', '-t', 'main', '-l', keys),
    async waitFor(text: string): Promise<string> {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const shown = screen();
        if (shown.includes(text)) return shown;
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for ${text}; the screen shows:\n${shown}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}

/** The screen's lines, without the blank ones. */
const lines = (screen: string) => screen.split('\n').filter((line) => line.trim() !== '');

beforeAll(() => {
  // Not skipped when tmux is missing: the check would then prove nothing, silently.
  execFileSync('tmux', ['-V']);
});

describe('the approval prompt in a real terminal', () => {
  it('control: the raw command printed as the prompt used to print it forges `command: ls -la`', async () => {
    const terminal = startInTmux({
      raw: `\nux: approve this command?\n  command: ${FORGED}\n  in:      /work\n`,
    });
    const screen = lines(await terminal.waitFor('in:      /work'));
    expect(screen).toContain('  command: ls -la');
    expect(screen.join('\n')).not.toContain('approve this command?');
    expect(screen.join('\n')).not.toContain('touch x');
  });

  it('shows the command as escapes under a note; no forged line appears and nothing runs on "n"', async () => {
    const home = makeHome();
    const terminal = startInTmux({ args: ['exec', '--approval', 'untrusted', '--', FORGED], home });
    const screen = lines(await terminal.waitFor('Press y/'));
    expect(screen).toContain('ux: approve this command?');
    expect(screen).toContain(`  command: ${FORGED_SHOWN}`);
    expect(
      screen.some((line) => /^ {2}note: +the command holds control or invisible characters/.test(line)),
    ).toBe(true);
    expect(screen.filter((line) => /^\s*command: ls -la/.test(line))).toEqual([]);
    await terminal.type('n');
    const after = await terminal.waitFor('[launcher: ux exited with 1]');
    expect(after).toContain('n: deny');
    expect(after).toContain('ux: not run: rejected by the user');
    expect(existsSync(join(home.workspace, 'x'))).toBe(false);
  });
});

describe('the notice of a program that ran outside the sandbox', () => {
  let zsh: string;
  beforeAll(() => {
    zsh = zshForkPath();
  });

  /** The zsh fork on, `touch` allowed outside the sandbox by a rule, as `[p]` would save it. */
  function forkHome(): UxHome {
    const home = makeHome({
      config: `[features]\nshell_zsh_fork = true\nunified_exec_zsh_fork = true\n[zsh_fork]\nzsh_path = "${zsh}"\n`,
    });
    mkdirSync(join(home.home, 'rules'));
    writeFileSync(
      join(home.home, 'rules', 'touch.rules'),
      'prefix_rule(pattern=["touch"], decision="allow")\n',
    );
    return home;
  }
  // `$T` keeps the whole script from matching the rule: only the intercepted `touch` runs outside.
  const SCRIPT = `echo before; T=touch; $T '${TITLE_CLEAR}'; echo after`;

  it('control: the raw notice sets the title, clears the screen and forges a line', async () => {
    const terminal = startInTmux({
      raw: `before\nafter\n[ux sandbox: ran \`touch ${TITLE_CLEAR}\` OUTSIDE the sandbox, as policy allows]\n[ux: done]`,
    });
    const screen = lines(await terminal.waitFor('[ux: done]'));
    expect(terminal.title()).toBe('pwned');
    expect(screen[0]).toMatch(/^Sandbox: nothing ran outside the sandbox/);
    expect(screen.join('\n')).not.toContain('before');
  });

  it('is one line with escapes in the terminal view: title, screen and lines stay as they were', async () => {
    const home = forkHome();
    const terminal = startInTmux({ args: ['exec', '--', SCRIPT], home });
    const screen = lines(await terminal.waitFor('[launcher: ux exited with 0]'));
    // It really ran outside the sandbox, with the words as given.
    expect(readdirSync(home.workspace)).toEqual([TITLE_CLEAR]);
    expect(screen).toContain('before');
    expect(screen).toContain('after');
    expect(
      screen.some((line) =>
        line.startsWith(
          `[ux sandbox: ran \`touch ${TITLE_CLEAR_SHOWN}\` OUTSIDE the sandbox, as policy allows]`,
        ),
      ),
    ).toBe(true);
    expect(screen.filter((line) => line.startsWith('Sandbox: nothing ran'))).toEqual([]);
    expect(terminal.title()).not.toBe('pwned');
  });

  it('is one line with escapes in the receipt', async () => {
    const home = forkHome();
    const result = await runUx(['exec', '--', SCRIPT], home);
    expect(result.status).toBe(0);
    expect(readdirSync(home.workspace)).toEqual([TITLE_CLEAR]);
    expect(result.stdout).toContain(
      `\nSandbox: ran \`touch ${TITLE_CLEAR_SHOWN}\` OUTSIDE the sandbox, as policy allows\n`,
    );
    expect(result.stdout).toMatch(/\nOutput:\nbefore\nafter\n/);
    expect(result.stdout).not.toMatch(RAW);
  });
});

describe('ux mcp', () => {
  /** `ux mcp --approval untrusted` in `cwd`, its client answering each elicitation with the next answer. */
  async function connect(home: UxHome, cwd: string, answers: ElicitResult[]) {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--approval', 'untrusted'],
      cwd,
      env: home.env,
      stderr: 'pipe',
    });
    const client = new Client(
      { name: 'ux-test', version: '1.0.0' },
      { capabilities: { elicitation: { form: {} } } },
    );
    const asked: { message: string; titles: string[] }[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const params = request.params as unknown as {
        message: string;
        requestedSchema: { properties: { decision: { oneOf: { title: string }[] } } };
      };
      asked.push({
        message: params.message,
        titles: params.requestedSchema.properties.decision.oneOf.map((choice) => choice.title),
      });
      return answers.shift() ?? { action: 'decline' };
    });
    await client.connect(transport);
    onTestFinished(() => client.close());
    return { client, asked };
  }

  function textOf(result: unknown): string {
    return ((result as { content: { text: string }[] }).content ?? []).map((part) => part.text).join('');
  }

  it('asks and answers with escapes: the elicitation, the refusal and a notice about a path it chose', async () => {
    // approvals_via = "client": the instant decline is the client's answer (the default asks the inbox).
    const home = makeHome({ config: 'approvals_via = "client"\n' });
    // A directory a sandboxed command could have made; the session runs in it.
    const cwd = join(home.workspace, 'w\x1b]0;pwned\x07\x1b[2J\rork');
    const cwdShown = `${home.workspace}/w\\e]0;pwned\\x07\\e[2J\\rork`;
    mkdirSync(cwd);
    const { client, asked } = await connect(home, cwd, [
      { action: 'decline' },
      { action: 'accept', content: { decision: 'approve' } },
    ]);

    const refused = await client.callTool({ name: 'exec_command', arguments: { cmd: FORGED } });
    expect(refused.isError).toBe(true);
    expect(asked).toHaveLength(1);
    const { message, titles } = asked[0]!;
    expect(message).not.toMatch(RAW);
    expect(message.split('\n')).toEqual(
      expect.arrayContaining([`command: ${FORGED_SHOWN}`, `in: ${cwdShown}`]),
    );
    expect(message).toMatch(/\nnote: the command and the directory hold control or invisible characters/);
    for (const title of titles) expect(title).not.toMatch(RAW);
    const refusal = textOf(refused);
    expect(refusal).not.toMatch(RAW);
    // The command as the model sent it, escaped; the instant decline is the client's own answer.
    expect(refusal).toContain(`Not run \`${FORGED_SHOWN}\`: `);
    expect(refused.structuredContent).toMatchObject({
      status: 'refused',
      command: FORGED,
      refusal: { decided_by: 'client' },
    });
    expect(existsSync(join(cwd, 'x'))).toBe(false);

    // Approved, it runs in the sandbox; the .ux it makes is taken away, and the notice names the path.
    const ran = await client.callTool({ name: 'exec_command', arguments: { cmd: 'mkdir .ux && echo made' } });
    expect(ran.isError).toBeFalsy();
    expect(asked).toHaveLength(2);
    expect(existsSync(join(cwd, '.ux'))).toBe(false);
    const structured = ran.structuredContent as { sandbox_notices?: string[]; output: string };
    expect(structured.output).toBe('made\n');
    expect(structured.sandbox_notices).toHaveLength(1);
    expect(structured.sandbox_notices![0]).toMatch(
      new RegExp(`^the command created ${cwdShown.replace(/[\\[\]]/g, '\\$&')}/\\.ux \\(`),
    );
    expect(structured.sandbox_notices![0]).not.toMatch(RAW);
    const receipt = textOf(ran);
    expect(receipt).toContain(`\nSandbox: the command created ${cwdShown}/.ux (`);
    expect(receipt).not.toMatch(RAW);
  });
});

describe('ux sandbox and ux exec --json', () => {
  it('ux sandbox says what it took back with escapes for the path the command chose', async () => {
    const home = makeHome();
    const cwd = join(home.workspace, 'w\x1b]0;pwned\x07\x1b[2J\rork');
    mkdirSync(cwd);
    const result = await runUx(['sandbox', '--', 'mkdir', '.ux'], home, { cwd });
    expect(result.status).toBe(0);
    expect(existsSync(join(cwd, '.ux'))).toBe(false);
    expect(result.stderr).toMatch(/^ux sandbox: the command created /m);
    expect(result.stderr).toContain(
      `the command created ${home.workspace}/w\\e]0;pwned\\x07\\e[2J\\rork/.ux (`,
    );
    expect(result.stderr).not.toMatch(RAW);
  });

  it("--json lines carry no C1 control or bidi override raw, and still decode to the command's output", async () => {
    const home = makeHome();
    const output = 'a\u202eb\u009bc\n';
    const result = await runUx(['exec', '--json', '--', 'printf "a\\u202eb\\xc2\\x9bc\\n"'], home);
    expect(result.status).toBe(0);
    expect(result.stdout).not.toMatch(/[\u0080-\u009f\u202e]/);
    expect(result.stdout).toContain('"output":"a\\u202eb\\u009bc\\n"');
    expect(JSON.parse(result.stdout).output).toBe(output);
  });
});
