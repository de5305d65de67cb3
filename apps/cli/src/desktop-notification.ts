import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import type { PendingApproval } from './approval-inbox.js';

/** How long a notifier may run before it is ended. */
const NOTIFIER_LIMIT_MS = 10_000;

/** `notify-send` on PATH, when there is one. */
export function findNotifier(env: NodeJS.ProcessEnv): string | undefined {
  for (const directory of (env.PATH ?? '').split(delimiter)) {
    if (!isAbsolute(directory)) continue;
    const path = join(directory, 'notify-send');
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * Tells the desktop that a question waits (`notify-send`, without a shell): the headline and the
 * command, already escaped by `approvalDetails`. Never fails the caller: a notifier that is missing,
 * fails or hangs (ended after 10 s) changes nothing.
 */
export function notifyDesktop(notifier: string, approval: PendingApproval): void {
  const command = approval.details.find((detail) => detail.label !== 'in' && detail.label !== 'sandbox');
  try {
    const child = spawn(
      notifier,
      [
        '--app-name=ux',
        '--urgency=critical',
        `ux: ${approval.headline}`,
        `${command ? `${command.text}\n` : ''}answer with: ux approvals (question ${approval.id})`,
      ],
      { stdio: 'ignore' },
    );
    const timer = setTimeout(() => child.kill('SIGKILL'), NOTIFIER_LIMIT_MS);
    timer.unref();
    child.once('error', () => clearTimeout(timer));
    child.once('exit', () => clearTimeout(timer));
    child.unref();
  } catch {
    // A notification is a courtesy: the question waits in the inbox either way.
  }
}
