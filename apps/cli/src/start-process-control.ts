import { type ControlProcessKind, type ControlServer, startControlServer } from '@ux/control';
import { readableText } from '@ux/protocol-utils';
import packageJson from '../package.json' with { type: 'json' };

/**
 * Starts this process's control socket (`@ux/control`). A control plane that cannot start (an unsafe
 * runtime directory, no Unix sockets) costs the person `ux ps` and `ux attach`, never the session: it
 * is a warning and undefined.
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
      onHandlerError: (line, error) =>
        warn(
          `control request failed: ${readableText(error instanceof Error ? error.message : String(error))} (${readableText(line.slice(0, 200))})`,
        ),
    });
  } catch (error) {
    warn(
      `no control socket (ux ps and ux attach cannot reach this process): ${readableText(error instanceof Error ? error.message : String(error))}`,
    );
    return undefined;
  }
}
