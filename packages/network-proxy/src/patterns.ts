// The pattern grammar alone, for configuration readers: no servers, no resolver, so a program that only
// validates `network.allow` entries (the CLI at start-up) loads no networking modules.
export {
  type CompiledDomainPolicy,
  compileDomainPolicy,
  type DomainMatch,
  type DomainPattern,
  type NetworkPolicy,
  parseDomainPattern,
} from './domain-policy.js';
export {
  NetworkProxyError,
  type NetworkProxyErrorFields,
  type NetworkProxyErrorReason,
} from './network-proxy-error.js';
export { formatHostPort, type HostKind, type NormalizedHost, normalizeHost } from './normalize-host.js';
