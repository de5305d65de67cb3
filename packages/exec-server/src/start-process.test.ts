import type { EffectivePolicy, ExecParams, SandboxBackend, Spawner } from '@ux/protocol';
import { codexWorkspaceWriteContext } from '@ux/protocol-testing';
import { describe, expect, it } from 'vitest';
import { startProcess } from './start-process.js';

describe('startProcess', () => {
  it("adds the server's hostState to the policy of every sandboxed start", async () => {
    const planned: EffectivePolicy[] = [];
    // A backend that records the policy it is asked to apply, then refuses (nothing is spawned).
    const backend = {
      id: 'recording',
      plan: async (request: { policy: EffectivePolicy }) => {
        planned.push(request.policy);
        throw new Error('recorded');
      },
    } as unknown as SandboxBackend;
    const spawner = { spawn: async () => Promise.reject(new Error('never spawned')) } as unknown as Spawner;
    const params = {
      processId: 'p1',
      argv: ['/bin/true'],
      cwd: 'file:///tmp',
      env: {},
      tty: false,
      sandbox: codexWorkspaceWriteContext('file:///tmp'),
    } as unknown as ExecParams;
    await expect(
      startProcess(
        {
          spawner,
          selectSandbox: async () => ({ available: true, backend, enforces: [] }),
          serverEnv: {},
          hostState: { readOnly: ['/home/u/.ux'], hidden: ['/tmp/ux-1000'] },
        },
        params,
      ),
    ).rejects.toThrow('recorded');
    expect(planned).toHaveLength(1);
    expect(planned[0]!.hostState).toEqual({ readOnly: ['/home/u/.ux'], hidden: ['/tmp/ux-1000'] });
  });
});
