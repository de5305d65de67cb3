import { type ControlProcessKind, type ControlServer, startControlServer } from '@ux/control';
import packageJson from '../package.json' with { type: 'json' };
import type { ApprovalInbox } from './approval-inbox.js';
import { serveApprovals } from './serve-approvals.js';

export interface ProcessControlOptions {
  kind: ControlProcessKind;
  cwd: string;
  /** For a control socket that cannot start, and handler bugs. */
  log: (text: string) => void;
  /** The process's approvals inbox, served as `approvals.*`. */
  inbox?: ApprovalInbox;
  runtimeRoot?: string;
}

/**
 * Starts this process's control socket and serves what the process has on it. A socket that cannot
 * start is logged and `{ server: undefined, error }` returned: the process serves on without it.
 */
export async function startProcessControl(
  options: ProcessControlOptions,
): Promise<{ server?: ControlServer; error?: string; close(): Promise<void> }> {
  let server: ControlServer;
  try {
    server = await startControlServer({
      kind: options.kind,
      cwd: options.cwd,
      version: packageJson.version,
      ...(options.runtimeRoot ? { runtimeRoot: options.runtimeRoot } : {}),
      onHandlerError: (method, error) =>
        options.log(
          `ux: control socket: ${method} failed: ${error instanceof Error ? error.message : String(error)}\n`,
        ),
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    options.log(
      `ux: warning: the control socket cannot start (ux ps, ux approvals cannot reach this process): ${message}\n`,
    );
    return { error: message, close: async () => undefined };
  }
  const stops: (() => void)[] = [];
  // approvals (wt-approvals)
  if (options.inbox) stops.push(serveApprovals(server, options.inbox));
  return {
    server,
    close: async () => {
      for (const stop of stops) stop();
      await server.close();
    },
  };
}
