import { ControlError, type ControlServer } from '@ux/control';
import { StdinClosedError, UnknownProcessIdError } from '@ux/protocol/core';
import { CTRL_C, MAX_WRITE_STDIN_BYTES, type ProcessInfo, type UnifiedExec } from '@ux/unified-exec';
import type { ControlSession } from './control-sessions.js';

export { startProcessControl } from './start-process-control.js';

/**
 * Serves the `sessions.*` methods of docs/control-plane.md for a door's sessions: list, attach (output
 * events), write (a person's keys, through `write_stdin`'s path: they land in the session's output
 * and the model's next poll sees what they did), interrupt and kill (that session only). `door` is
 * asked at each request: `ux mcp` builds its door only once the client has initialized.
 */
export function serveSessions(server: ControlServer, door: () => UnifiedExec | undefined): void {
  const find = (params: unknown): { door: UnifiedExec; id: number; info: ProcessInfo } => {
    const id = sessionParam(params);
    const active = door();
    const info = active?.processes().find((process) => process.sessionId === id);
    if (!active || !info) throw noSession(id, active);
    return { door: active, id, info };
  };

  server.handle('sessions.list', () => ({
    sessions: (door()?.processes() ?? []).map((info) => controlSession(info)),
  }));

  server.handle('sessions.attach', (params, connection) => {
    const { door: active, id, info } = find(params);
    const stop = active.watchSession(id, {
      output: (chunk) =>
        connection.send('sessions.output', { session: id, data: Buffer.from(chunk).toString('base64') }),
      exit: (exitCode) => connection.send('sessions.exit', { session: id, exitCode }),
    });
    if (!stop) throw noSession(id, active);
    connection.onClose(stop);
    return { session: controlSession(info) };
  });

  server.handle('sessions.write', async (params) => {
    const { door: active, id } = find(params);
    const data = (params as { data?: unknown }).data;
    if (typeof data !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(data))
      throw new ControlError('bad_request', 'sessions.write needs data: the bytes to write, in base64');
    const bytes = Buffer.from(data, 'base64');
    if (bytes.length > MAX_WRITE_STDIN_BYTES)
      throw new ControlError('bad_request', `at most ${MAX_WRITE_STDIN_BYTES} bytes per sessions.write`);
    await deliver(active, id, bytes.toString('utf8'));
    return {};
  });

  server.handle('sessions.interrupt', async (params) => {
    const { door: active, id } = find(params);
    await deliver(active, id, CTRL_C);
    return {};
  });

  server.handle('sessions.kill', async (params) => {
    const { door: active, id } = find(params);
    await active.terminateSession(id).catch((error: unknown) => {
      throw UnknownProcessIdError.isInstance(error) ? noSession(id, active) : error;
    });
    return {};
  });
}

/** What `sessions.list` says of one session. */
export function controlSession(info: ProcessInfo, now = Date.now()): ControlSession {
  return {
    id: info.sessionId,
    command: info.command,
    cwd: info.cwd,
    tty: info.tty,
    environment: info.environment,
    sandbox: info.sandbox,
    state: info.running ? 'running' : 'exited',
    ...(info.exitCode === undefined ? {} : { exitCode: info.exitCode }),
    ...(info.waitingForInput === undefined ? {} : { waitingForInput: info.waitingForInput }),
    startedAt: info.startedAt,
    idleMs: Math.max(0, now - (info.lastOutputAt ?? info.startedAt)),
    lastLines: info.lastLines,
    ...(info.lastLineOpen ? { lastLineOpen: true } : {}),
  };
}

async function deliver(door: UnifiedExec, id: number, chars: string): Promise<void> {
  try {
    await door.writeToSession(id, chars);
  } catch (error) {
    if (UnknownProcessIdError.isInstance(error)) throw noSession(id, door);
    if (StdinClosedError.isInstance(error) && error.reason === 'no_stdin')
      throw new ControlError(
        'failed',
        `session ${id} has no terminal: only Ctrl-C (sessions.interrupt) reaches it; nothing was written`,
      );
    throw new ControlError(
      'failed',
      `session ${id}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

function sessionParam(params: unknown): number {
  const session =
    typeof params === 'object' && params !== null ? (params as { session?: unknown }).session : undefined;
  if (typeof session !== 'number' || !Number.isSafeInteger(session) || session <= 0)
    throw new ControlError('bad_request', 'params.session must be a session id (a positive integer)');
  return session;
}

function noSession(id: number, door: UnifiedExec | undefined): ControlError {
  const ids = door?.processes().map((process) => process.sessionId) ?? [];
  return new ControlError(
    'not_found',
    `no session ${id} in process ${process.pid}; ${ids.length === 0 ? 'it has none' : `its sessions: ${ids.join(', ')}`}`,
  );
}
