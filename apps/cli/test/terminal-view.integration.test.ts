// `ux exec` for a person: in a real terminal (node-pty), the view streams, attaches at once, answers
// approvals with one key and says what happened in words; --receipt keeps the model's format.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { useLeakCheck } from '@ux/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  expectNoneMatching,
  makeHome,
  pidsMatching,
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

describe('ux exec on a terminal: the live view', () => {
  it('streams output long before the default 10 s wait, and keys typed at once are echoed once', async () => {
    const home = makeHome();
    const ux = await startUxInTerminal(
      ['exec', '--tty', '--', 'echo ready; read line; echo "got $line"; sleep 60'],
      home,
    );
    await ux.waitFor('[ux: running as session', 5000);
    await ux.waitFor('ready', 5000);
    // Typed as soon as the command speaks: kept for it, not echoed by ux's own terminal.
    await ux.type('abc\r');
    await ux.waitFor('got abc');
    expect(ux.screen.match(/abc/g)).toHaveLength(2); // the command's terminal echo, then "got abc"
    expect(ux.screen).not.toContain('Chunk ID');
    await ux.type('\u001d');
    await ux.waitFor('ux> ');
    await ux.type('exit\r');
    expect(await ux.exitCode()).toBe(0);
  });

  it('Ctrl-C goes to the attached command, which lives on; ux does not end it', async () => {
    const home = makeHome();
    const marker = uniqueMarker();
    const ux = await startUxInTerminal(
      ['exec', '--', `: ${marker}; trap 'echo INT-TRAP' INT; echo READY; while :; do sleep 0.1; done`],
      home,
    );
    await ux.waitFor('Ctrl-] detaches]');
    await ux.waitFor('READY');
    await ux.type('\u0003');
    await ux.waitFor('INT-TRAP');
    expect(pidsMatching(marker).length).toBeGreaterThan(0);
    await ux.type('\u001d');
    await ux.waitFor('ux> ');
    await ux.type('list\r');
    expect(await ux.waitFor('ux> ')).toContain(marker);
    await ux.type('exit\r');
    expect(await ux.exitCode()).toBe(0);
    await expectNoneMatching(marker);
  });

  it('says in words that the sandbox blocked a write, with the real elapsed time', async () => {
    const home = makeHome({ config: NO_TMP });
    const target = join(home.home, 'outside.txt');
    const ux = await startUxInTerminal(['exec', '--approval', 'never', '--', `touch ${target}`], home);
    // The named denial once the door puts one in the result (nameDenial), else what the OS said.
    await ux.waitFor(
      /\[ux: (?:blocked by the sandbox \(read-only file system\)|the sandbox blocked a write to \S*outside\.txt: it is outside the places this command may write); exit code 1 after \d+\.\d+ s\]/,
    );
    expect(await ux.exitCode()).toBe(1);
    expect(ux.screen).not.toContain('Chunk ID');
    expect(ux.screen).not.toContain('Original token count');
    expect(existsSync(target)).toBe(false);
  });

  it('a command that ends inside the first moment still shows the time it really took', async () => {
    const home = makeHome();
    const ux = await startUxInTerminal(['exec', '--', 'sleep 0.12; exit 4'], home);
    const shown = await ux.waitFor(/\[ux: exited with code 4 after (\d+\.\d+) s\]/);
    const seconds = Number(/exited with code 4 after (\d+\.\d+) s/.exec(shown)?.[1]);
    expect(seconds).toBeGreaterThanOrEqual(0.12);
    expect(await ux.exitCode()).toBe(4);
  });

  it('a short command shows its output and its exit code, not a receipt', async () => {
    const home = makeHome();
    const ux = await startUxInTerminal(['exec', '--', 'echo hello; exit 3'], home);
    await ux.waitFor('hello');
    await ux.waitFor(/\[ux: exited with code 3 after \d+\.\d+ s\]/);
    expect(await ux.exitCode()).toBe(3);
    expect(ux.screen).not.toContain('Wall time');
  });
});

describe('ux exec on a terminal: approvals', () => {
  it('says that approving may rerun it outside the sandbox, and the end says it did', async () => {
    const home = makeHome({ config: NO_TMP });
    const target = join(home.home, 'outside.txt');
    const ux = await startUxInTerminal(['exec', '--approval', 'untrusted', '--', `touch ${target}`], home);
    const question = await ux.waitFor('(Ctrl-C aborts): ');
    expect(question).toContain(`command: touch ${target}`);
    expect(question).toContain(
      'sandbox: approving runs it in the sandbox; if the sandbox stops it as it starts, it runs again OUTSIDE the sandbox without asking again',
    );
    await ux.type('y');
    await ux.waitFor(
      '[ux sandbox: the sandbox blocked the first run; as approved, it ran again WITHOUT the sandbox]',
    );
    expect(await ux.exitCode()).toBe(0);
    expect(existsSync(target)).toBe(true);
  });

  it('[p] says where the rule goes and what it lets through, and saves it', async () => {
    const home = makeHome();
    const ux = await startUxInTerminal(['exec', '--approval', 'untrusted', '--', 'touch x5 x6'], home);
    const question = await ux.waitFor('(Ctrl-C aborts): ');
    const rules = join(home.home, 'rules', 'default.rules');
    expect(question).toContain(
      `[p] saves prefix_rule(pattern=["touch", "x5", "x6"], decision="allow") to ${rules}; from then on every command starting with \`touch x5 x6\` runs without asking, OUTSIDE the sandbox`,
    );
    await ux.type('p');
    expect(await ux.exitCode()).toBe(0);
    expect(readFileSync(rules, 'utf8')).toBe(
      'prefix_rule(pattern=["touch", "x5", "x6"], decision="allow")\n',
    );
  });

  it('offers no rule for a shell, and Ctrl-C aborts with "aborted by the user"', async () => {
    const home = makeHome();
    const ux = await startUxInTerminal(['exec', '--approval', 'untrusted', '--', 'sh'], home);
    const question = await ux.waitFor('(Ctrl-C aborts): ');
    expect(question).not.toContain('[p]');
    expect(question).toContain('[y] approve once');
    await ux.type('\u0003');
    await ux.waitFor('ux: not run: aborted by the user');
    expect(await ux.exitCode()).toBe(1);
  });
});

describe('ux exec --receipt on a terminal', () => {
  it('keeps the receipt; Ctrl-C during the wait stops waiting, and the command keeps running', async () => {
    const home = makeHome();
    const marker = uniqueMarker();
    const ux = await startUxInTerminal(
      ['exec', '--receipt', '--', `echo started; sleep 60; : ${marker}`],
      home,
    );
    await waitForCommandRunning(`sleep 60; : ${marker}`);
    await ux.type('\u0003');
    const said = await ux.waitFor(/the command keeps running as session (\d+)/);
    expect(said).toContain('ux: stopped waiting');
    await ux.waitFor('ux> ');
    expect(pidsMatching(marker).length).toBeGreaterThan(0);
    await ux.type('poll\r');
    expect(await ux.waitFor('ux> ')).toMatch(/Chunk ID: [0-9a-f]{6}\r?\nWall time/);
    await ux.type('exit\r');
    expect(await ux.exitCode()).toBe(0);
    await expectNoneMatching(marker);
  });
});
