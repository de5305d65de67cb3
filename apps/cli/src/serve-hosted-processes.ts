import { ControlError, type ControlServer } from '@ux/control';
import type { ExecServer, HostedProcess } from '@ux/exec-server';
import type { ControlSession } from './control-sessions.js';

/** How many last output lines `sessions.list` reports (as the door does). */
const LAST_LINES = 5;
const MAX_WRITE_BYTES = 1024 * 1024;

/**
 * Serves `sessions.*` for an exec-server's hosted processes: every process of every client session,
 * numbered 1, 2, … for this server (the protocol's process ids are the clients' own and may repeat).
 * Keys written by a person go to the process as a `process/write` would; the client's next
 * `process/read` sees their echo and what they did. Kill ends that process only.
 */
export function serveHostedProcesses(control: ControlServer, server: () => ExecServer | undefined): void {
  const find = (params: unknown): { id: number; process: HostedProcess } => {
    const session =
      typeof params === 'object' && params !== null ? (params as { session?: unknown }).session : undefined;
    if (typeof session !== 'number' || !Number.isSafeInteger(session) || session <= 0)
      throw new ControlError('bad_request', 'params.session must be a session id (a positive integer)');
    const all = server()?.hostedProcesses() ?? [];
    const found = all.find((entry) => entry.id === session);
    if (!found)
      throw new ControlError(
        'not_found',
        `no session ${session} in process ${process.pid}; ${all.length === 0 ? 'it has none' : `its sessions: ${all.map((entry) => entry.id).join(', ')}`}`,
      );
    return found;
  };

  control.handle('sessions.list', () => ({
    sessions: (server()?.hostedProcesses() ?? []).map(({ id, sessionId, process: hosted }) =>
      hostedSession(id, sessionId, hosted),
    ),
  }));

  control.handle('sessions.attach', (params, connection) => {
    const { id, process: hosted } = find(params);
    const sessionId =
      server()
        ?.hostedProcesses()
        .find((entry) => entry.id === id)?.sessionId ?? '';
    const stop = hosted.watch({
      output: (data) =>
        connection.send('sessions.output', { session: id, data: Buffer.from(data).toString('base64') }),
      exit: (exitCode) => connection.send('sessions.exit', { session: id, exitCode }),
    });
    connection.onClose(stop);
    return { session: hostedSession(id, sessionId, hosted) };
  });

  control.handle('sessions.write', async (params) => {
    const { id, process: hosted } = find(params);
    const data = (params as { data?: unknown }).data;
    if (typeof data !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(data))
      throw new ControlError('bad_request', 'sessions.write needs data: the bytes to write, in base64');
    const bytes = Buffer.from(data, 'base64');
    if (bytes.length > MAX_WRITE_BYTES)
      throw new ControlError('bad_request', `at most ${MAX_WRITE_BYTES} bytes per sessions.write`);
    if (!hosted.tty) {
      if (bytes.length === 1 && bytes[0] === 3) {
        await hosted.interrupt();
        return {};
      }
      throw new ControlError(
        'failed',
        `session ${id} has no terminal: only Ctrl-C (sessions.interrupt) reaches it; nothing was written`,
      );
    }
    // A write id of ux's own: the client's de-duplication never mistakes it for one of its writes.
    const status = await hosted.write(bytes, `ux-control-${process.pid}-${++writes}`);
    if (status !== 'accepted') throw new ControlError('failed', `session ${id}: its stdin is closed`);
    return {};
  });
  let writes = 0;

  control.handle('sessions.interrupt', async (params) => {
    const { process: hosted } = find(params);
    // A terminal gets the Ctrl-C byte (its line discipline signals the foreground group), as the door does.
    if (hosted.tty) await hosted.write(Buffer.from([3]), `ux-control-${process.pid}-${++writes}`);
    else await hosted.interrupt();
    return {};
  });

  control.handle('sessions.kill', async (params) => {
    const { process: hosted } = find(params);
    await hosted.terminate();
    return {};
  });
}

function hostedSession(
  id: number,
  sessionId: string,
  hosted: HostedProcess,
  now = Date.now(),
): ControlSession {
  const info = hosted.info(LAST_LINES);
  return {
    id,
    command: [...info.argv],
    cwd: info.cwd,
    tty: info.tty,
    // Whose it is: the client's session (its process id there is the client's own).
    environment: `client ${sessionId.slice(0, 8)}`,
    sandbox: info.sandbox,
    state: info.running ? 'running' : 'exited',
    ...(info.exitCode === undefined ? {} : { exitCode: info.exitCode }),
    startedAt: info.startedAt,
    idleMs: Math.max(0, now - (info.lastOutputAt ?? info.startedAt)),
    lastLines: info.lastLines,
  };
}
