import * as z from 'zod/v4';

/** A proposed change to the network policy for one host, offered with a network approval. */
export const networkPolicyAmendmentSchema = z.strictObject({
  host: z.string().min(1),
  action: z.enum(['allow', 'deny']),
});
export type NetworkPolicyAmendment = z.output<typeof networkPolicyAmendmentSchema>;

// Built on first use (`z.lazy`): a process that never validates review decisions does not pay for it at start-up.
/**
 * The answer to an approval request. Approved variants let the command run; `denied` and a network
 * `deny` amendment reject it ("rejected by user"); `abort` rejects it and interrupts the turn;
 * `timed_out` comes only from an automatic reviewer that did not answer in time.
 */
export const reviewDecisionSchema = z.lazy(() =>
  z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('approved') }),
    z.strictObject({
      type: z.literal('approved_execpolicy_amendment'),
      /** The command prefix to allow from now on (persisted as an exec-policy rule). */
      amendment: z.array(z.string()).min(1),
    }),
    z.strictObject({ type: z.literal('approved_for_session') }),
    z.strictObject({ type: z.literal('network_policy_amendment'), amendment: networkPolicyAmendmentSchema }),
    z.strictObject({ type: z.literal('denied') }),
    z.strictObject({ type: z.literal('timed_out') }),
    z.strictObject({ type: z.literal('abort') }),
  ]),
);
export type ReviewDecision = z.output<typeof reviewDecisionSchema>;
export type ReviewDecisionType = ReviewDecision['type'];

export const reviewDecisionTypes = [
  'approved',
  'approved_execpolicy_amendment',
  'approved_for_session',
  'network_policy_amendment',
  'denied',
  'timed_out',
  'abort',
] as const satisfies readonly ReviewDecisionType[];
