import { ControlError, type ControlServer } from '@ux/control';
import { type ApprovalInbox, InboxAnswerError } from './approval-inbox.js';

/** The topic `approvals.watch` subscribes to. */
export const APPROVALS_TOPIC = 'approvals';

/**
 * Serves `inbox` on the control socket: `approvals.list` (`{approvals}`), `approvals.answer {id,
 * decision}` (`{id, decision, label}`; `not_found` for an unknown id, `bad_request` for a decision the
 * question does not offer) and `approvals.watch` (subscribes; answers the current list, then events
 * `approvals.added` (a question) and `approvals.removed` `{id, reason, decision?}`). Returns what
 * stops the events.
 */
export function serveApprovals(server: ControlServer, inbox: ApprovalInbox): () => void {
  server.handle('approvals.list', () => ({ approvals: inbox.list() }));
  server.handle('approvals.answer', (params) => {
    const { id, decision } = (params ?? {}) as { id?: unknown; decision?: unknown };
    if (typeof id !== 'string' || typeof decision !== 'string')
      throw new ControlError(
        'bad_request',
        'approvals.answer needs {"id": "PID:N", "decision": "approve|approve-session|deny|abort|…"}',
      );
    try {
      return inbox.answer(id, decision);
    } catch (error) {
      if (InboxAnswerError.isInstance(error))
        throw new ControlError(error.reason === 'not_found' ? 'not_found' : 'bad_request', error.message);
      throw error;
    }
  });
  server.handle('approvals.watch', (_params, connection) => {
    connection.subscribe(APPROVALS_TOPIC);
    return { approvals: inbox.list() };
  });
  return inbox.onChange((event) => {
    if (event.type === 'added') server.publish(APPROVALS_TOPIC, 'approvals.added', event.approval);
    else
      server.publish(APPROVALS_TOPIC, 'approvals.removed', {
        id: event.id,
        reason: event.reason,
        ...(event.decision ? { decision: event.decision } : {}),
      });
  });
}
