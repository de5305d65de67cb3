// The variables live with the policy types, where sandbox plugins (which know only the protocol) read them.
export { NO_PROXY_HOSTS, type ProxyEnvironmentOptions, proxyEnvironment } from '@ux/protocol-utils';
export { type ResolveHost, UpstreamError, type UpstreamFailure } from './connect-upstream.js';
export type { NetworkConnectionEvent, OpenConnection } from './connection-record.js';
export {
  createNetworkProxy,
  MAX_UNIX_SOCKET_PATH_BYTES,
  type NetworkProxy,
  type NetworkProxyOptions,
  type NetworkProxyStats,
} from './create-network-proxy.js';
export { briefDenial, type DenialDescription, describeDenial } from './describe-denial.js';
export { isLocalAddress } from './is-local-address.js';
export { networkAccessEvent } from './network-access-event.js';
export type {
  ConnectionDecision,
  DecidedBy,
  DenialReason,
  NetworkAccessRequest,
  NetworkAsk,
  NetworkAskAnswer,
  ProxyProtocol,
} from './network-decider.js';
// The pattern grammar, its errors and host names: the same names as `@ux/network-proxy/patterns`.
export * from './patterns.js';
export { BLOCKED_HEADER_VALUE, BLOCKED_REASON, DENIED_HEADER } from './serve-http.js';
