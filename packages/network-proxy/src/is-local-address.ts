import { BlockList, isIPv6 } from 'node:net';

// Loopback, private, link-local, shared (CGNAT), benchmarking, multicast and reserved ranges: the
// addresses a name on the internet has no business resolving to from the host's point of view.
// BlockList also matches IPv4-mapped IPv6 (`::ffff:10.0.0.1`) against the IPv4 rules.
const local = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  local.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  local.addSubnet(network, prefix, 'ipv6');

/** Whether an IP address is loopback, private, link-local or otherwise not a public destination. */
export function isLocalAddress(address: string): boolean {
  return local.check(address, isIPv6(address) ? 'ipv6' : 'ipv4');
}
