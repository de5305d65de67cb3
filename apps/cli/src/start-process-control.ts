import { type ControlProcessKind, type ControlServer, startControlServer } from '@ux/control';
import { readableText } from '@ux/protocol/core';
import packageJson from '../package.json' with { type: 'json' };

/**
 * Starts this process's control socket (`@ux/control`). A control plane that cannot start (an unsafe
 * runtime directory, no Unix sockets) is a warning and undefined: the process serves on without it
 * (its inbox questions are then refused at once, see `createInboxReviewer`). What the process serves
 * on it is added by the caller: `serveApprovals(server, inbox)` (serve-approvals.ts).
 *
 * Same name and signature as wt-control's (serve-sessions.ts): when both are merged, keep one.
 */
export async function startProcessControl(
  kind: ControlProcessKind,
  cwd: string,
  warn: (message: string) => void,
): Promise<ControlServer | undefined> {
  try {
    return await startControlServer({
      kind,
      cwd,
      version: packageJson.version,
      onHandlerError: (method, error) =>
        warn(
          `control request ${method} failed: ${readableText(error instanceof Error ? error.message : String(error))}`,
        ),
    });
  } catch (error) {
    warn(
      `no control socket (ux approvals cannot reach this process): ${readableText(error instanceof Error ? error.message : String(error))}`,
    );
    return undefined;
  }
}
