// The door against slow, noisy login files: a login file that sleeps and prints on both
// streams must neither show up in a command's output (the shell snapshot absorbs it) nor run again for
// every command; and the door's test harness must not read this machine's login files at all (a stale
// pyenv rehash lock once made every login shell of the suite wait 60 s).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { tempDir, useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { makeDoor, ofType, parseReceipt, spawner } from '../test/test-support.js';

beforeAll(async () => {
  await warmUpSpawner(spawner);
});
useLeakCheck();

const ctx = (callId: string) => ({ callId });

/**
 * A HOME whose bash login files take about a second, print junk to stdout and stderr, set a variable,
 * and count their runs in `$HOME/rc-runs`.
 */
function slowNoisyHome(): string {
  const home = tempDir('ux-noisy-home-');
  writeFileSync(
    join(home, '.bashrc'),
    [
      'echo x >> "$HOME/rc-runs"',
      'sleep 1',
      'echo "rc-junk-on-stdout: welcome"',
      'echo "rc-junk-on-stderr: warning" >&2',
      'export FROM_RC=set-by-rc',
      '',
    ].join('\n'),
  );
  writeFileSync(join(home, '.bash_profile'), '. "$HOME/.bashrc"\n');
  writeFileSync(join(home, '.profile'), 'echo "profile-junk"\n');
  return home;
}

const runs = (home: string) =>
  existsSync(join(home, 'rc-runs')) ? readFileSync(join(home, 'rc-runs'), 'utf8').split('\n').length - 1 : 0;

describe('a slow, noisy login file', () => {
  it('with shell snapshots: login commands get what it sets up, none of what it prints, and it runs once', async () => {
    const home = slowNoisyHome();
    const { door, events } = makeDoor({
      flags: { shell_snapshot: true },
      door: {
        baseEnvironment: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home },
        // Generous: the capture must not fall back because a loaded machine was slow (the default is 5 s).
        shellSnapshotTimeoutMs: 60_000,
      },
    });
    const first = parseReceipt(
      (await door.execCommand({ cmd: 'echo "cmd-out [$FROM_RC]"', yield_time_ms: 30_000 }, ctx('a'))).text,
    );
    expect(first).toMatchObject({ exitCode: 0, output: 'cmd-out [set-by-rc]\n' });
    const second = parseReceipt(
      (
        await door.execCommand(
          { cmd: 'echo "again [$FROM_RC]"; echo err-line >&2', yield_time_ms: 30_000 },
          ctx('b'),
        )
      ).text,
    );
    expect(second).toMatchObject({ exitCode: 0, output: 'again [set-by-rc]\nerr-line\n' });
    // Run once, for the snapshot, not once per command.
    expect(runs(home)).toBe(1);
    // What the login files printed went to a warning event, not to any command.
    const warnings = ofType(events, 'warning').filter((event) => event.source === 'shell_snapshot');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.details).toContain('rc-junk-on-stdout');
  });

  it('without shell snapshots: the login command still runs to its end after the login files', async () => {
    const home = slowNoisyHome();
    const { door } = makeDoor({
      flags: { shell_snapshot: false },
      door: { baseEnvironment: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home } },
    });
    const receipt = parseReceipt(
      (await door.execCommand({ cmd: 'echo "cmd-out [$FROM_RC]"', yield_time_ms: 30_000 }, ctx('a'))).text,
    );
    expect(receipt.exitCode, receipt.output).toBe(0);
    // A plain login shell shows what the login files print, before the command's own line on the same
    // stream (stderr is a pipe of its own, so its line may come anywhere).
    const stdoutJunk = receipt.output.indexOf('rc-junk-on-stdout: welcome\n');
    expect(stdoutJunk, receipt.output).toBeGreaterThanOrEqual(0);
    expect(receipt.output.indexOf('cmd-out [set-by-rc]\n'), receipt.output).toBeGreaterThan(stdoutJunk);
    expect(receipt.output).toContain('rc-junk-on-stderr: warning\n');
    expect(runs(home)).toBe(1);
  });
});

describe("the door's test harness", () => {
  it("never reads this machine's login files: a HOME with a stale pyenv-style lock costs nothing", async () => {
    // This process's HOME, for this test: login files that would hang while a rehash lock is left in
    // place (as pyenv's do for 60 s) and leave a mark when they run.
    const machineHome = tempDir('ux-machine-home-');
    mkdirSync(join(machineHome, '.pyenv', 'shims'), { recursive: true });
    writeFileSync(join(machineHome, '.pyenv', 'shims', '.pyenv-shim'), '');
    writeFileSync(
      join(machineHome, '.bashrc'),
      'touch "$HOME/rc-ran"\nwhile [ -e "$HOME/.pyenv/shims/.pyenv-shim" ]; do sleep 1; done\n',
    );
    writeFileSync(join(machineHome, '.bash_profile'), '. "$HOME/.bashrc"\n');
    writeFileSync(join(machineHome, '.profile'), '. "$HOME/.bashrc"\n');
    vi.stubEnv('HOME', machineHome);
    try {
      expect(homedir()).toBe(machineHome);
      for (const shellSnapshot of [false, true]) {
        const { door } = makeDoor({ flags: { shell_snapshot: shellSnapshot } });
        const receipt = parseReceipt(
          (
            await door.execCommand(
              { cmd: 'echo "home=$HOME"', yield_time_ms: 30_000 },
              ctx(`snapshot-${shellSnapshot}`),
            )
          ).text,
        );
        expect(receipt.exitCode).toBe(0);
        expect(receipt.output).not.toContain(machineHome);
        expect(receipt.output).toMatch(/^home=\/\S+\n$/);
      }
      expect(existsSync(join(machineHome, 'rc-ran'))).toBe(false);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
