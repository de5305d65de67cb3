import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { useLeakCheck } from '@ux/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  BIN,
  expectNoneMatching,
  makeHome,
  pidsMatching,
  runUx,
  startUxInTerminal,
  uniqueMarker,
  waitForCommandRunning,
  warmUpTerminalSpawner,
} from './cli-harness.js';

beforeAll(warmUpTerminalSpawner);
useLeakCheck();

/** /tmp is writable in workspace-write by default; these tests need "outside" to be outside. */
// Denials here must count as sandbox denials even when a loaded machine makes `touch` slow to fail.
const NO_TMP =
  'early_exit_window_ms = 5000\n[sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n';

const RECEIPT = /^Chunk ID: [0-9a-f]{6}\nWall time: \d+\.\d{4} seconds\n/;

describe('ux exec: receipts', () => {
  it('prints the receipt of a finished command and passes its exit code on', async () => {
    const home = makeHome();
    const result = await runUx(['exec', '--', 'echo hello; echo oops >&2; exit 3'], home);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(3);
    expect(result.stdout).toMatch(RECEIPT);
    // The level it ran under: bubblewrap, and what it declares it enforces.
    expect(result.stdout).toContain(
      'Process exited with code 3\nSandbox level: bwrap (file system enforced, network enforced; enforces write_limits, protected_names, read_deny, network_off, network_by_domain, unix_socket_control, private_tmp, process_isolation)\nOriginal token count: 3\nOutput:\n',
    );
    // stdout and stderr are separate pipes: their order between each other is the kernel's.
    expect(result.stdout.split('Output:\n')[1]!.split('\n').sort()).toEqual(['', '', 'hello', 'oops']);
  });

  it('joins several words with quoting, and takes one word as a script', async () => {
    const home = makeHome();
    const words = await runUx(['exec', '--', 'printf', '%s|', 'a b', "it's"], home);
    expect(words.stdout).toContain("Output:\na b|it's|");
    const script = await runUx(['exec', '--', 'echo one && echo two'], home);
    expect(script.stdout).toContain('Output:\none\ntwo\n');
  });

  it('polls a running command to completion when there is no terminal, printing each receipt', async () => {
    const home = makeHome();
    const marker = uniqueMarker();
    const result = await runUx(
      ['exec', '--yield-ms', '250', '--', `: ${marker}; echo first; sleep 1; echo second`],
      home,
    );
    expect(result.status).toBe(0);
    const receipts = result.stdout.split(/(?=^Chunk ID: )/m);
    expect(receipts.length).toBe(2);
    expect(receipts[0]).toMatch(/Process running with session ID \d+\n/);
    expect(receipts[0]).toContain('first\n');
    expect(receipts[1]).toContain('Process exited with code 0');
    expect(receipts[1]).toContain('second\n');
    await expectNoneMatching(marker);
  });

  it('prints the structured result with --json', async () => {
    const home = makeHome();
    const result = await runUx(['exec', '--json', '--', 'printf done'], home);
    expect(result.status).toBe(0);
    const parsed = JSON.parse(result.stdout);
    expect(parsed).toMatchObject({ exit_code: 0, output: 'done', original_token_count: 1 });
    expect(parsed.session_id).toBeUndefined();
    expect(parsed.chunk_id).toMatch(/^[0-9a-f]{6}$/);
  });

  it('sandboxes by default: a write outside the workspace is blocked and its receipt says so', async () => {
    const home = makeHome({ config: `approval_policy = "never"\n${NO_TMP}` });
    const target = join(home.home, 'outside.txt');
    const result = await runUx(['exec', '--', `echo x > ${target}`], home);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain('Read-only file system');
    expect(existsSync(target)).toBe(false);
    const inside = await runUx(['exec', '--', 'echo x > inside.txt'], home);
    expect(inside.status).toBe(0);
    expect(readFileSync(join(home.workspace, 'inside.txt'), 'utf8')).toBe('x\n');
  });

  it('denies what needs approval when no person can be asked (approvals_via = "client"), and says why', async () => {
    const home = makeHome({ config: 'approvals_via = "client"\n' });
    const result = await runUx(['exec', '--approval', 'untrusted', '--', 'touch made'], home);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain(
      'Not run `touch made`: no one could be asked for approval (stdin is not a terminal;',
    );
    expect(result.stdout).toContain('\nRefused by: nobody could be asked (nobody)\n');
    expect(result.stdout).not.toContain('rejected by');
    expect(result.stderr).toContain('`touch made` needs approval (approval policy "untrusted"');
    expect(result.stderr).toContain('no one could be asked for approval');
    expect(existsSync(join(home.workspace, 'made'))).toBe(false);
  });

  it('ends the process when ux is stopped by a signal', async () => {
    const home = makeHome();
    const marker = uniqueMarker();
    const child = spawn(process.execPath, [BIN, 'exec', '--', `echo started; sleep 60; : ${marker}`], {
      cwd: home.workspace,
      env: home.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    await waitForCommandRunning(`sleep 60; : ${marker}`);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += String(chunk);
    });
    child.stderr.on('data', (chunk) => {
      stderr += String(chunk);
    });
    child.kill('SIGTERM');
    const status = await new Promise((resolve) => child.on('close', (code) => resolve(code)));
    expect(status).toBe(143);
    // Said as it is: the command is ended, not left "still running".
    expect(stderr).toContain('ux: stopped by SIGTERM: ending the command and exiting');
    expect(stdout).not.toContain('still running');
    await expectNoneMatching(marker);
  });

  it('without a terminal, Ctrl-C (SIGINT) says that it ends the command, and does', async () => {
    const home = makeHome();
    const marker = uniqueMarker();
    const child = spawn(process.execPath, [BIN, 'exec', '--', `echo started; sleep 60; : ${marker}`], {
      cwd: home.workspace,
      env: home.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += String(chunk);
    });
    await waitForCommandRunning(`sleep 60; : ${marker}`);
    child.kill('SIGINT');
    const status = await new Promise((resolve) => child.on('close', (code) => resolve(code)));
    expect(status).toBe(130);
    expect(stderr).toContain('ux: stopped by SIGINT: ending the command and exiting');
    await expectNoneMatching(marker);
  });
});

describe('ux exec: in a terminal', () => {
  it('attaches: keys reach the process, output streams, Ctrl-] detaches, the prompt polls it', async () => {
    const home = makeHome();
    const marker = uniqueMarker();
    const ux = await startUxInTerminal(
      ['exec', '--tty', '--yield-ms', '250', '--', `cat; : ${marker}`],
      home,
    );
    await ux.waitFor('Ctrl-] detaches]');
    await ux.type('hello\r');
    await ux.waitFor('hello'); // the terminal's echo
    await ux.waitFor('hello'); // cat's copy
    await ux.type('\u001d');
    const detached = await ux.waitFor(/\[detached; session (\d+) keeps running\]/);
    const sessionId = /session (\d+) keeps/.exec(detached)![1];
    await ux.waitFor('ux> ');
    expect(pidsMatching(marker).length).toBeGreaterThan(0);
    await ux.type(`send ${sessionId} \\u0004\r`);
    // Ctrl-D at the start of a line is end of input: cat exits, and the receipt says so.
    await ux.waitFor('Process exited with code 0');
    await ux.waitFor('ux> ');
    await ux.type(`poll ${sessionId}\r`);
    await ux.waitFor(`write_stdin failed: Unknown process id ${sessionId}`);
    await ux.type('exit\r');
    expect(await ux.exitCode()).toBe(0);
    await expectNoneMatching(marker);
  });

  it('re-polls a detached session, attaches again, and ends it on exit', async () => {
    const home = makeHome();
    const marker = uniqueMarker();
    const ux = await startUxInTerminal(
      [
        'exec',
        '--yield-ms',
        '250',
        '--',
        `: ${marker}; i=0; while :; do i=$((i+1)); echo "tick $i"; sleep 0.2; done`,
      ],
      home,
    );
    await ux.waitFor('Ctrl-C interrupts it; Ctrl-] detaches]');
    await ux.waitFor('tick 3');
    await ux.type('\u001d');
    await ux.waitFor('ux> ');
    await ux.type('poll\r');
    const receipt = await ux.waitFor('ux> ');
    expect(receipt).toMatch(/Process running with session ID \d+/);
    expect(receipt).toMatch(/tick \d+/);
    await ux.type('list\r');
    expect(await ux.waitFor('ux> ')).toMatch(/\d+ {2}pipe {2}local {2}bwrap/);
    await ux.type('attach\r');
    await ux.waitFor('Ctrl-] detaches]');
    await ux.waitFor(/tick \d+/);
    await ux.type('\u001d');
    await ux.waitFor('ux> ');
    expect(pidsMatching(marker).length).toBeGreaterThan(0);
    await ux.type('exit\r');
    expect(await ux.exitCode()).toBe(0);
    await expectNoneMatching(marker);
  });

  it('passes on the exit code when the attached process ends', async () => {
    const home = makeHome();
    const ux = await startUxInTerminal(
      ['exec', '--tty', '--yield-ms', '250', '--', 'read line; exit $line'],
      home,
    );
    await ux.waitFor('Ctrl-] detaches]');
    await ux.type('42\r');
    await ux.waitFor(/exited with code 42 after \d+\.\d+ s\]/);
    expect(await ux.exitCode()).toBe(42);
  });

  it('asks the person with one key: approve once runs the command', async () => {
    const home = makeHome();
    const ux = await startUxInTerminal(['exec', '--approval', 'untrusted', '--', 'touch made'], home);
    const question = await ux.waitFor('(Ctrl-C aborts): ');
    expect(question).toContain('ux: approve this command?');
    expect(question).toContain('command: touch made');
    expect(question).toContain(`in:      ${home.workspace}`);
    expect(question).toContain(
      'why:     approval policy "untrusted": `touch made` is not a known read-only command',
    );
    expect(question).toMatch(
      /\[y\] approve once {3}\[a\] approve for this session {3}\[p\] always allow `touch made …` {3}\[n\] deny {3}\[x\] abort/,
    );
    // One key answers: no Enter.
    await ux.type('y');
    await ux.waitFor('y: approve once');
    await ux.waitFor(/\[ux: exited with code 0 after \d+\.\d+ s\]/);
    expect(await ux.exitCode()).toBe(0);
    expect(existsSync(join(home.workspace, 'made'))).toBe(true);
  });

  it('asks the person after a sandbox denial: deny keeps it from running unsandboxed', async () => {
    const home = makeHome({ config: NO_TMP });
    const target = join(home.home, 'outside.txt');
    const ux = await startUxInTerminal(['exec', '--approval', 'on-failure', '--', `touch ${target}`], home);
    const question = await ux.waitFor('(Ctrl-C aborts): ');
    expect(question).toContain('ux: the sandbox blocked this command; run it again WITHOUT the sandbox?');
    expect(question).toContain('why:     the sandbox blocked it (touch: cannot touch');
    expect(question).toContain('sandbox: approving runs it OUTSIDE the sandbox');
    await ux.type('m');
    await ux.waitFor('"m" is not an answer; press y/a/p/n/x');
    await ux.type('n');
    await ux.waitFor('ux: not run: rejected by the user');
    expect(await ux.exitCode()).toBe(1);
    expect(existsSync(target)).toBe(false);
  });
});

describe('ux exec: bad input', () => {
  it.each([
    [['exec', '--ttty', '--', 'true'], 'ux: unknown option --ttty (did you mean "--tty"?)'],
    [
      ['exec', '--sandbox', 'workspace', '--', 'true'],
      '--sandbox must be one of read-only, workspace-write, danger-full-access, got "workspace"',
    ],
    [
      ['exec', '--approval', 'sometimes', '--', 'true'],
      '--approval must be one of untrusted, on-failure, on-request, never, got "sometimes"',
    ],
    [
      ['exec', '--yield-ms', 'soon', '--', 'true'],
      '--yield-ms must be a non-negative integer of milliseconds, got "soon"',
    ],
    [['exec', '--cwd', '/no/such/dir', '--', 'true'], '--cwd /no/such/dir: no such directory'],
    [['exec'], 'no command given; put it after --'],
    [['exec', '--yield-ms'], 'option --yield-ms needs a value'],
    [['exce'], 'unknown command "exce"'],
  ])('%j is a usage error', async (args, message) => {
    const result = await runUx(args, makeHome());
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(message);
  });

  it('names the file, line and column of a malformed config, and runs nothing', async () => {
    const home = makeHome({ config: 'approval_policy = "never"\nsandbox_mode = "workspace"\n' });
    const result = await runUx(['exec', '--', 'touch made'], home);
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      `ux: ${home.config}:2:1: sandbox_mode must be one of read-only, workspace-write, danger-full-access, external-sandbox, got "workspace" (did you mean "workspace-write"?)\n`,
    );
    expect(existsSync(join(home.workspace, 'made'))).toBe(false);
  });

  it('refuses a choice the requirements do not allow, naming both places', async () => {
    const home = makeHome({
      config: 'approval_policy = "never"\n',
      requirements:
        'allowed_approval_policies = ["untrusted", "on-request"]\nallowed_sandbox_modes = ["read-only", "workspace-write"]\n',
    });
    const fromConfig = await runUx(['exec', '--', 'touch made'], home);
    expect(fromConfig.status).toBe(1);
    expect(fromConfig.stderr).toBe(
      `ux: ${home.requirements}:1:1: approval policy "never" (from ${home.config}:1:1) is not allowed here: allowed_approval_policies = ["untrusted", "on-request"]\n`,
    );
    const fromFlag = await runUx(
      ['exec', '--approval', 'untrusted', '--sandbox', 'danger-full-access', '--', 'touch made'],
      home,
    );
    expect(fromFlag.stderr).toContain(
      `ux: ${home.requirements}:2:1: sandbox mode "danger-full-access" (from --sandbox danger-full-access) is not allowed here`,
    );
    expect(existsSync(join(home.workspace, 'made'))).toBe(false);
  });
});
