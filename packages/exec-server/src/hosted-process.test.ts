import type { ExecProcess, LaunchPlan, SandboxBackend, SandboxNotice } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { HostedProcess } from './hosted-process.js';

describe('HostedProcess', () => {
  it("writes a sandbox notice into the output as ux's own line, with the path's escapes", async () => {
    let tell: ((notice: SandboxNotice) => void) | undefined;
    const plan = {
      onNotice: (listener: (notice: SandboxNotice) => void) => {
        tell = listener;
        return () => {};
      },
    } as unknown as LaunchPlan;
    const process = {
      onOutput: () => () => {},
      exited: new Promise(() => {}),
    } as unknown as ExecProcess;
    const hosted = new HostedProcess({
      processId: 'p1',
      process,
      tty: false,
      stdinOpen: false,
      sandbox: { backend: {} as SandboxBackend, plan },
      settled: new Promise(() => {}),
      notify: () => {},
      onClosed: () => {},
    });
    tell!({
      kind: 'protected_path_undone',
      path: '/w/a\x1b[2J/.ux',
      message: 'the command created /w/a\x1b[2J\r/.ux; ux removed it',
    });
    const read = await hosted.read(0, null, 1000);
    const text = read.chunks.map((chunk) => Buffer.from(chunk.chunk, 'base64').toString('utf8')).join('');
    expect(text).toBe('\n[ux sandbox: the command created /w/a\\e[2J\\r/.ux; ux removed it]\n');
    expect(read.chunks.map((chunk) => chunk.stream)).toEqual(['stderr']);
  });
});
