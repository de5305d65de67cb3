/** The zod side of `@ux/protocol`: wire schemas and the envelope parser. */
export type ProtocolSchemas = typeof import('@ux/protocol');

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
