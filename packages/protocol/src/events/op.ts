import * as z from 'zod/v4';

// Built on first use (`z.lazy`): a process that never validates ops does not pay for it at start-up.
/**
 * Operations a client sends to a session:
 * `interrupt` stops waiting on the current turn and kills nothing;
 * `clean_background_terminals` kills every stored process;
 * `shutdown` aborts the turn, then kills every stored process.
 */
export const opSchema = z.lazy(() =>
  z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('interrupt') }),
    z.strictObject({ type: z.literal('clean_background_terminals') }),
    z.strictObject({ type: z.literal('shutdown') }),
  ]),
);
export type Op = z.output<typeof opSchema>;
