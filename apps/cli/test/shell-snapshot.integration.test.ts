// Shell snapshots through what users run: `ux mcp` under the MCP SDK's client and `ux exec`, with a
// temporary HOME whose login files set things up, print, write, break or hang.
import { existsSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { useLeakCheck } from '@ux/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, makeHome, runUx, type UxHome } from './cli-harness.js';

useLeakCheck();

const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.close()));
});

/** A HOME (also UX_HOME) whose bash login files are `rc`. */
function homeWithRc(rc: string): UxHome {
  const home = makeHome();
  writeFileSync(join(home.home, '.bashrc'), rc);
  writeFileSync(join(home.home, '.bash_profile'), '. "$HOME/.bashrc"\n');
  return home;
}

async function connect(home: UxHome) {
  const stderr: string[] = [];
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp'],
    cwd: home.workspace,
    env: home.env,
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk) => stderr.push(String(chunk)));
  const client = new Client({ name: 'ux-test', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  open.push(client);
  const exec = async (cmd: string, extra: Record<string, unknown> = {}) => {
    const result = await client.callTool({ name: 'exec_command', arguments: { cmd, ...extra } });
    return (result.content as { text: string }[]).map((part) => part.text).join('');
  };
  return { client, exec, stderr };
}

const RC = `export SNAP_VAR='line one
"quoted" two'
alias greet='echo hello-from-alias'
snap_func() { echo "function says $1"; }
echo "rc: welcome to this machine"
`;

describe('shell snapshots', () => {
  it('commands see what the login files set up, never what they print; an edit is picked up', async () => {
    const home = homeWithRc(RC);
    const { exec } = await connect(home);
    const text = await exec('echo "[$SNAP_VAR]"; greet; snap_func hi');
    expect(text).toContain('[line one\n"quoted" two]');
    expect(text).toContain('hello-from-alias');
    expect(text).toContain('function says hi');
    expect(text).not.toContain('rc: welcome');

    writeFileSync(
      join(home.home, '.bashrc'),
      RC.replace("alias greet='echo hello-from-alias'", "alias greet='echo edited'"),
    );
    // A later mtime even on a coarse clock.
    const later = new Date(Date.now() + 5000);
    utimesSync(join(home.home, '.bashrc'), later, later);
    expect(await exec('greet')).toContain('edited');
  });

  it('keeps exact line counts with a noisy login file', async () => {
    const home = homeWithRc('echo noise one\necho noise two >&2\n');
    const { exec } = await connect(home);
    const text = await exec('seq 1 20000', { max_output_tokens: 50 });
    expect(text).toContain('Total output lines: 20000');
    expect(text).not.toContain('noise');
  });

  it.each([
    ['a syntax error', 'if then fi\n'],
    ['exit 3', 'exit 3\n'],
    ['an endless loop', 'while :; do :; done\n'],
  ])(
    'falls back to login commands with one warning when the login file has %s',
    async (_, rc) => {
      const home = homeWithRc(rc);
      const { exec, stderr } = await connect(home);
      // `login: false` runs no login file: it works whatever the rc does.
      expect(await exec('echo works', { login: false, yield_time_ms: 10_000 })).toContain('works');
      await exec('echo first', { yield_time_ms: 250 });
      await exec('echo second', { yield_time_ms: 250 });
      const warnings = stderr.join('').match(/warning: no shell snapshot for \/bin\/bash/g) ?? [];
      expect(warnings).toHaveLength(1);
    },
    30_000,
  );

  it('lets the login files change nothing on the host while they are captured', async () => {
    const home = homeWithRc(`touch "$HOME/written-by-rc"\necho hi > /tmp/ux-rc-${process.pid}\n`);
    const result = await runUx(['exec', '--', 'echo ran'], home);
    expect(result.stdout).toContain('ran');
    expect(existsSync(join(home.home, 'written-by-rc'))).toBe(false);
    expect(existsSync(`/tmp/ux-rc-${process.pid}`)).toBe(false);
  });

  it('ux features explain shows the snapshot, and shell_snapshot = false turns it off', async () => {
    const on = await runUx(['features', 'explain'], makeHome());
    expect(on.stdout).toContain('shell snapshot: the login shell runs once per session');
    const off = makeHome({ config: '[features]\nshell_snapshot = false\n' });
    writeFileSync(join(off.home, '.bashrc'), 'echo "rc: every time"\n');
    writeFileSync(join(off.home, '.bash_profile'), '. "$HOME/.bashrc"\n');
    const explained = await runUx(['features', 'explain'], off);
    expect(explained.stdout).toContain('shell snapshot: off');
    const run = await runUx(['exec', '--', 'echo ran'], off);
    expect(run.stdout).toContain('rc: every time');
  });
});
