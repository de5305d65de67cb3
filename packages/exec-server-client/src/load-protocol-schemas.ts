/**
 * The zod side of `@ux/protocol` this client uses: wire schemas and the envelope parser. Named one by
 * one, so the contract's exported-names check (scripts/check-exports.mjs) sees them.
 */
export type ProtocolSchemas = Pick<
  typeof import('@ux/protocol'),
  | 'environmentInfoSchema'
  | 'execServerNotifications'
  | 'INITIALIZED_NOTIFICATION'
  | 'initializeResultSchema'
  | 'parseWireMessage'
  | 'readResultSchema'
  | 'sandboxContextSchema'
  | 'startResultSchema'
  | 'writeResultSchema'
>;

let loading: Promise<ProtocolSchemas> | undefined;

/**
 * Loads the protocol's schemas on the first connection, once. Everything else of this package needs
 * only `@ux/protocol/core`, so a host that composes a remote environment but never connects to it
 * (a local command of `ux exec`) starts without building a single schema.
 */
export function loadProtocolSchemas(): Promise<ProtocolSchemas> {
  loading ??= import('@ux/protocol');
  return loading;
}
