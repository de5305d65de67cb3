import { existsSync, mkdirSync, realpathSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import {
  SANDBOX_SPECIFICATION_VERSION,
  type SandboxBackend,
  SandboxUnavailableError,
  type UxEvent,
} from '@ux/protocol';
import { expectNoLeaks, snapshotProcess, tempDir, useLeakCheck } from '@ux/test-utils';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createDoor, type DoorOptions } from './create-door.js';

/** A workspace and a HOME of its own: no start-up file of this machine runs in these shells. */
function place() {
  const root = realpathSync(tempDir('ux-create-door-'));
  const cwd = join(root, 'workspace');
  const home = join(root, 'home');
  mkdirSync(cwd, { recursive: true });
  mkdirSync(home, { recursive: true });
  return { cwd, baseEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home } };
}

async function openDoor(options: Partial<DoorOptions> = {}) {
  const { cwd, baseEnv } = place();
  const events: UxEvent[] = [];
  const door = await createDoor({ cwd, baseEnv, onEvent: (event) => events.push(event), ...options });
  onTestFinished(() => door.shutdown());
  return { door, events, cwd };
}

useLeakCheck();

describe('createDoor', () => {
  it('runs a command in the platform sandbox, with no reviewer and nothing else', async () => {
    const { door, events, cwd } = await openDoor();
    expect(door.tools.map((tool) => tool.name)).toEqual(['exec_command', 'write_stdin']);
    const reply = await door.execCommand({ cmd: 'echo hello > note.txt && cat note.txt' });
    expect(reply.result).toMatchObject({ status: 'exited', exit_code: 0 });
    expect(reply.text).toContain('hello');
    expect(existsSync(join(cwd, 'note.txt'))).toBe(true);
    const begin = events.find((event) => event.type === 'exec_command_begin');
    expect(begin).toMatchObject({ sandbox: 'bwrap' });
    expect(events.filter((event) => event.type === 'exec_command_end')).toHaveLength(1);
  });

  it('keeps writes outside the workspace out, and says so to the model', async () => {
    const { door } = await openDoor();
    // Outside the workspace and the temporary directories the default policy lets commands write.
    const outside = join(homedir(), `ux-door-outside-${process.pid}-${Date.now()}`);
    onTestFinished(() => rmSync(outside, { force: true }));
    const reply = await door.execCommand({ cmd: `touch ${outside}` });
    expect(reply.result.status).toBe('exited');
    expect(reply.result.exit_code).not.toBe(0);
    expect(reply.result.sandbox_denied).toBe(true);
    expect(existsSync(outside)).toBe(false);
  });

  it('refuses, not waits, when a command asks for escalation and nobody can answer', async () => {
    const { door, events } = await openDoor({ approvalPolicy: 'on-request' });
    const reply = await door.execCommand({
      cmd: 'true',
      sandbox_permissions: 'require_escalated',
      justification: 'to test',
    });
    expect(reply.result.status).toBe('refused');
    expect(reply.result.refusal?.decided_by).toBe('nobody');
    expect(events.find((event) => event.type === 'exec_command_end')).toMatchObject({
      status: 'declined',
      blocked: { status: 'refused', reason: expect.stringContaining('without a reviewer') },
    });
  });

  it('fails closed when no sandbox can run here, and closes what it opened', async () => {
    let closed = 0;
    const missing: SandboxBackend = {
      specificationVersion: SANDBOX_SPECIFICATION_VERSION,
      id: 'missing',
      platforms: [process.platform],
      probe: async () => ({ available: false, reason: 'not installed', fix: 'install it' }),
      plan: async () => {
        throw new Error('never planned');
      },
      close: async () => {
        closed++;
      },
    };
    const { cwd } = place();
    const error = await createDoor({ cwd, sandbox: missing }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(SandboxUnavailableError.isInstance(error)).toBe(true);
    expect((error as SandboxUnavailableError).message).toMatch(/not installed/);
    // A backend the caller gave stays the caller's: the door does not close it.
    expect(closed).toBe(0);
  });

  it('leaves no child and no descriptor behind after shutdown, with a command still running', async () => {
    const baseline = snapshotProcess();
    const { cwd, baseEnv } = place();
    const door = await createDoor({ cwd, baseEnv });
    const running = await door.execCommand({ cmd: 'sleep 30', yield_time_ms: 250 });
    expect(running.result.status).toBe('running');
    const tty = await door.execCommand({ cmd: 'cat', tty: true, yield_time_ms: 250 });
    expect(tty.result.status).toBe('running');
    // The bwrap backend's path guard, the host reaper, the commands and their terminals.
    expect(snapshotProcess().descendants.length).toBeGreaterThan(baseline.descendants.length);
    await door.shutdown();
    await expectNoLeaks(baseline, 5_000);
    const after = await door.execCommand({ cmd: 'true' });
    expect(after.result.error?.code).toBe('session_shut_down');
  });
});
