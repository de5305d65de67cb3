// `ux exec-server` as a real child process, driven by the remote spawner of @ux/spawn.
import { createExecServerSpawner, spawnStdioExecServer } from '@ux/spawn';
import { useLeakCheck } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { BIN, makeHome, runUx } from './cli-harness.js';

useLeakCheck();

describe('ux exec-server', () => {
  it('hosts a command over stdio for the remote spawner, and stops when the client closes', async () => {
    const home = makeHome();
    const remote = createExecServerSpawner({
      name: 'remote environment "local-test"',
      connect: () =>
        spawnStdioExecServer({
          command: process.execPath,
          args: [BIN, 'exec-server', '--listen', 'stdio'],
          env: home.env,
        }),
    });
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

  it('refuses backends the requirements do not allow', async () => {
    const home = makeHome({ requirements: 'allowed_sandbox_backends = ["bwrap"]\n' });
    const result = await runUx(['exec-server', '--listen', 'stdio', '--sandbox-backends', 'seatbelt'], home);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('--sandbox-backends: seatbelt not allowed by the requirements');
  });

  it('is a usage error without --listen', async () => {
    const result = await runUx(['exec-server'], makeHome());
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('--listen');
  });
});
