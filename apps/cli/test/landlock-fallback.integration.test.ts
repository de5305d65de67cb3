// The Landlock fallback, through the built ux: on a host where bubblewrap cannot start (here its
// `[sandbox.bwrap] path` is a wrapper that fails as bwrap does without unprivileged user namespaces),
// `ux exec` and `ux mcp` pick the Landlock backend that `sandbox_plugins` loaded, by preference, and say
// so; a policy Landlock cannot enforce (the network by domain) is refused and nothing runs; `ux
// exec-server` on such a host runs its clients' commands under Landlock too.

import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { useLeakCheck } from '@ux/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  BIN,
  connectMcp,
  makeHome,
  runUx,
  startUxInTerminal,
  type UxHome,
  warmUpTerminalSpawner,
} from './cli-harness.js';

beforeAll(warmUpTerminalSpawner);
useLeakCheck();

const USERNS_ERROR =
  'bwrap: No permissions to create a new namespace, likely because the kernel does not allow non-privileged user namespaces.';

/** A home whose bwrap fails at once, with Landlock loaded by name and preferred after bwrap. */
function landlockHome(): UxHome {
  const home = makeHome();
  const failing = join(home.home, 'bwrap-without-userns');
  writeFileSync(failing, `#!/bin/sh\necho '${USERNS_ERROR}' >&2\nexit 1\n`);
  chmodSync(failing, 0o755);
  writeFileSync(
    home.config,
    [
      'sandbox_plugins = ["@ux/sandbox-landlock"]',
      'sandbox_backends = ["bwrap", "landlock"]',
      'approval_policy = "never"',
      '[sandbox.bwrap]',
      `path = ${JSON.stringify(failing)}`,
      '',
    ].join('\n'),
  );
  return home;
}

interface Level {
  backend: string;
  enforces?: string[];
  passed_over?: { backend: string; reason: string }[];
}

describe('bubblewrap cannot start: Landlock by preference', () => {
  it('ux exec runs the command under Landlock, says so, and keeps writes inside the workspace', async () => {
    const home = landlockHome();
    const outside = join(home.home, 'outside');
    const result = await runUx(
      ['exec', '--', 'sh', '-c', `echo made > inside; echo x > ${outside}; echo rc=$?`],
      home,
    );
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(
      /^Sandbox level: landlock \(.*enforces write_limits, protected_names, read_deny, network_off, private_tmp\); preferred bwrap not used: cannot run here: .*No permissions to create a new namespace/m,
    );
    expect(result.stdout).toMatch(/outside: Permission denied\nrc=2/);
    expect(existsSync(join(home.workspace, 'inside'))).toBe(true);
    expect(existsSync(outside)).toBe(false);
  });

  it('ux sandbox runs under Landlock and says on stderr which preferred backend it passed over', async () => {
    const home = landlockHome();
    const result = await runUx(
      ['sandbox', '--', 'sh', '-c', 'echo ran; touch /etc/ux-landlock-sandbox; echo rc=$?'],
      home,
    );
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^ran\n(.*\n)?rc=1\n$/);
    expect(result.stderr).toMatch(
      /^ux sandbox: landlock; preferred bwrap not used: cannot run here: .*No permissions to create a new namespace/m,
    );
    expect(existsSync('/etc/ux-landlock-sandbox')).toBe(false);
  });

  it('ux exec in a real terminal says the same', async () => {
    const home = landlockHome();
    const ux = await startUxInTerminal(['exec', '--tty', '--', 'sh', '-c', 'echo in-terminal; tty'], home);
    const shown = await ux.waitFor(/\/dev\/pts\/\d+/);
    expect(shown).toContain('in-terminal');
    expect(await ux.exitCode()).toBe(0);
    expect(ux.screen).toMatch(
      /^\[ux sandbox: landlock; preferred bwrap not used: cannot run here: .*No permissions to create a new namespace.*\]\r?\nin-terminal/m,
    );
  });

  it('ux mcp: the structured result names landlock, what it enforces and the backend passed over', async () => {
    const home = landlockHome();
    const client = await connectMcp(home);
    const answer = await client.callTool({
      name: 'exec_command',
      arguments: { cmd: 'touch /etc/ux-landlock-probe; echo rc=$?', login: false },
    });
    const structured = answer.structuredContent as { output: string; exit_code?: number; sandbox?: Level };
    expect(structured.sandbox).toMatchObject({
      backend: 'landlock',
      enforces: ['write_limits', 'protected_names', 'read_deny', 'network_off', 'private_tmp'],
      passed_over: [
        { backend: 'bwrap', reason: expect.stringContaining('No permissions to create a new namespace') },
      ],
    });
    expect(structured.output).toContain('rc=1');
    expect(existsSync('/etc/ux-landlock-probe')).toBe(false);
    const text = (answer.content as { type: string; text: string }[]).map((part) => part.text).join('');
    expect(text).toMatch(/Sandbox level: landlock .*preferred bwrap not used/);
  });

  it('refuses the network by domain, which Landlock cannot enforce, and runs nothing (ux exec and ux mcp)', async () => {
    const home = landlockHome();
    const marker = join(home.workspace, 'ran');
    const refused = await runUx(['exec', '--allow-domain', 'example.com', '--', 'touch', marker], home);
    expect(refused.status).toBe(1);
    expect(refused.stdout).toContain(
      'sandbox unavailable: the policy needs network_by_domain, which no usable sandbox backend enforces: landlock does not enforce network_by_domain',
    );
    expect(refused.stdout).toContain('bwrap cannot run here');
    expect(existsSync(marker)).toBe(false);

    const client = await connectMcp(home, ['--allow-domain', 'example.com']);
    const answer = await client.callTool({
      name: 'exec_command',
      arguments: { cmd: `touch ${marker}`, login: false },
    });
    expect(answer.isError).toBe(true);
    const text = (answer.content as { type: string; text: string }[]).map((part) => part.text).join('');
    expect(text).toContain('landlock does not enforce network_by_domain');
    expect(existsSync(marker)).toBe(false);
  });

  it("ux exec-server on that host runs a client's command under Landlock, and refuses a git workspace it cannot protect", async () => {
    const server = landlockHome();
    const client = makeHome();
    writeFileSync(
      client.config,
      [
        '[environments.box]',
        `command = ${JSON.stringify([
          'env',
          `HOME=${server.home}`,
          `UX_HOME=${server.home}`,
          `UX_REQUIREMENTS=${server.requirements}`,
          process.execPath,
          BIN,
          'exec-server',
          '--listen',
          'stdio',
        ])}`,
        '',
      ].join('\n'),
    );
    const outside = join(server.home, 'outside-remote');
    const ran = await runUx(
      ['exec', '--env', 'box', '--', `echo remote > made-remote; echo x > ${outside}; echo rc=$?`],
      client,
    );
    expect(ran.status).toBe(0);
    expect(ran.stdout).toMatch(/^Sandbox level: exec-server: landlock \(/m);
    expect(ran.stdout).toMatch(/outside-remote: Permission denied\nrc=[12]\n/);
    expect(existsSync(join(client.workspace, 'made-remote'))).toBe(true);
    expect(existsSync(outside)).toBe(false);

    mkdirSync(join(client.workspace, '.git'));
    writeFileSync(join(client.workspace, '.git', 'config'), '[core]\n');
    const refused = await runUx(['exec', '--env', 'box', '--', 'echo should-not-run > ran'], client);
    expect(refused.status).toBe(1);
    expect(refused.stdout).toMatch(/\.git\/config exists inside the writable root/);
    expect(existsSync(join(client.workspace, 'ran'))).toBe(false);
  });
});
