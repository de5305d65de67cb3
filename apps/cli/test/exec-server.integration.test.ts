// `ux exec-server` as a real child process, driven by the remote spawner of @ux/exec-server-client.

import {
  createExecServerSandbox,
  createExecServerSpawner,
  spawnStdioExecServer,
} from '@ux/exec-server-client';
import type { EffectivePolicy, ExecProcess } from '@ux/protocol';
import { runToEnd, waitForOutput } from '@ux/protocol-testing';
import { useLeakCheck } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { BIN, makeHome, runUx, type UxHome } from './cli-harness.js';

useLeakCheck();

/** The remote spawner of `@ux/exec-server-client`, speaking to `ux exec-server --listen stdio` as a child process. */
const localExecServer = (home: UxHome) =>
  createExecServerSpawner({
    name: 'remote environment "local-test"',
    connect: () =>
      spawnStdioExecServer({
        command: process.execPath,
        args: [BIN, 'exec-server', '--listen', 'stdio'],
        env: home.env,
      }),
  });

describe('ux exec-server', () => {
  it('hosts a command over stdio for the remote spawner, and stops when the client closes', async () => {
    const home = makeHome();
    const remote = localExecServer(home);
    try {
      const child = await remote.spawn({
        argv: ['/bin/sh', '-c', 'echo "hello from $0 in $(pwd)"'],
        cwd: home.workspace,
        env: { PATH: '/usr/bin:/bin' },
        tty: false,
        stdin: 'closed',
      });
      let output = '';
      child.onOutput((chunk) => {
        output += Buffer.from(chunk).toString('utf8');
      });
      expect((await child.exited).exitCode).toBe(0);
      await child.closed;
      expect(output).toBe(`hello from /bin/sh in ${home.workspace}\n`);
      expect(remote.environmentInfo).toBeDefined();
    } finally {
      await remote.close();
    }
  });

  it.each([false, true])(
    'tty=%s: Ctrl-C reaches a sandboxed command it hosts; the INT trap runs and its code 42 comes back',
    async (tty) => {
      const home = makeHome();
      const remote = localExecServer(home);
      const policy: EffectivePolicy = {
        fileSystem: {
          kind: 'restricted',
          entries: [
            { path: { type: 'special', value: 'root' }, access: 'read' },
            { path: { type: 'special', value: 'cwd' }, access: 'write' },
          ],
        },
        network: 'restricted',
      };
      try {
        const plan = await createExecServerSandbox(remote).plan({
          argv: [
            'bash',
            '-c',
            'trap \'echo INT-TRAP; exit 42\' INT; echo "READY $UX_SANDBOX"; while true; do sleep 1; done',
          ],
          cwd: home.workspace,
          env: { PATH: '/usr/bin:/bin' },
          policy,
          tty,
        });
        const child: ExecProcess = await remote.spawn({ ...plan, tty, stdin: tty ? 'pipe' : 'closed' });
        await waitForOutput(child, 'READY bwrap', 10_000);
        const rest = runToEnd(child, 10_000);
        if (tty) await child.write('\u0003');
        else await child.interrupt();
        const { status, text } = await rest;
        expect(text).toContain('INT-TRAP');
        expect(status.exitCode).toBe(42);
      } finally {
        await remote.close();
      }
    },
  );

  it('refuses backends the requirements do not allow', async () => {
    const home = makeHome({ requirements: 'allowed_sandbox_backends = ["bwrap"]\n' });
    const result = await runUx(['exec-server', '--listen', 'stdio', '--sandbox-backends', 'seatbelt'], home);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('--sandbox-backends: seatbelt not allowed by the requirements');
  });

  it('does not start where the requirements forbid commands on this machine', async () => {
    const requirements =
      'allowed_environments = ["box", "gpu"]\n[environments.box]\nurl = "ws://127.0.0.1:1"\ntoken_env = "T"\n';
    const home = makeHome({ requirements });
    const result = await runUx(['exec-server', '--listen', 'stdio'], home);
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      `ux: ${home.requirements}:1:1: allowed_environments = ["box", "gpu"] forbids commands on this machine, and ux exec-server would run them here; run the server on a host whose requirements allow "local"\n`,
    );
    expect(result.stdout).toBe('');
  });

  it('is a usage error without --listen', async () => {
    const result = await runUx(['exec-server'], makeHome());
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('--listen');
  });
});
