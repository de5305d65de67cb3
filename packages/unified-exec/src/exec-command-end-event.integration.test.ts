import { runToEnd } from '@ux/protocol-testing';
import { createLocalSpawner } from '@ux/spawn';
import { useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { execCommandEndEvent } from './exec-command-end-event.js';
import { OutputStream } from './output-stream.js';

const spawner = createLocalSpawner();

beforeAll(async () => {
  await warmUpSpawner(spawner);
});
useLeakCheck();

async function streamed(script: string) {
  const process = await spawner.spawn({
    argv: ['/bin/sh', '-c', script],
    cwd: '/',
    env: { PATH: '/usr/bin:/bin' },
    tty: false,
    stdin: 'closed',
  });
  const stream = new OutputStream(process, () => {});
  const { status } = await runToEnd(process);
  await stream.drained;
  return { stream, status };
}

describe('execCommandEndEvent', () => {
  it('writes the event in its wire order, output from the streamed transcript', async () => {
    const { stream, status } = await streamed('printf streamed');
    const event = execCommandEndEvent({
      callId: 'call-1',
      processId: 1000,
      command: ['/bin/sh', '-c', 'printf streamed'],
      cwd: '/work',
      source: 'unified_exec_startup',
      exitCode: status.exitCode,
      stream,
      collected: 'collected',
      durationMs: 12,
    });
    expect(JSON.stringify(event)).toBe(
      JSON.stringify({
        type: 'exec_command_end',
        call_id: 'call-1',
        process_id: '1000',
        command: ['/bin/sh', '-c', 'printf streamed'],
        cwd: '/work',
        source: 'unified_exec_startup',
        exit_code: 0,
        stdout: 'streamed',
        stderr: '',
        aggregated_output: 'streamed',
        formatted_output: 'streamed',
        duration_ms: 12,
        status: 'completed',
      }),
    );
  });

  it('falls back to what the call collected, and reports an unknown or non-zero exit as failed', async () => {
    const { stream, status } = await streamed('exit 3');
    const base = {
      callId: 'c',
      processId: 7,
      command: ['x'],
      cwd: '/',
      source: 'shell_command' as const,
      stream,
      durationMs: 0,
    };
    expect(execCommandEndEvent({ ...base, exitCode: status.exitCode, collected: 'seen' })).toMatchObject({
      exit_code: 3,
      aggregated_output: 'seen',
      status: 'failed',
    });
    expect(execCommandEndEvent({ ...base, exitCode: undefined })).toMatchObject({
      exit_code: -1,
      stdout: '',
      status: 'failed',
    });
  });
});
