import type { NetworkPolicy } from '@ux/protocol/core';

/** A proxy that refuses every connection: the discard port on loopback. */
export const DEAD_PROXY = 'http://127.0.0.1:9';

/**
 * What a restricted network adds: proxies that go nowhere, package managers told to stay offline, git
 * told not to use ssh or remote protocols. Programs that ignore these can still connect: this is advice
 * to well-behaved tools, not enforcement.
 */
const NO_NETWORK: readonly (readonly [string, string])[] = [
  ['HTTP_PROXY', DEAD_PROXY],
  ['HTTPS_PROXY', DEAD_PROXY],
  ['ALL_PROXY', DEAD_PROXY],
  ['NO_PROXY', 'localhost,127.0.0.1,::1'],
  ['PIP_NO_INDEX', '1'],
  ['PIP_DISABLE_PIP_VERSION_CHECK', '1'],
  ['NPM_CONFIG_OFFLINE', 'true'],
  ['CARGO_NET_OFFLINE', 'true'],
  ['GIT_SSH_COMMAND', 'cmd.exe /d /c exit 1'],
  ['GIT_ALLOW_PROTOCOL', 'file'],
  ['UX_SANDBOX_NETWORK_DISABLED', '1'],
];

/** Pagers that wait for a key would hang a command nobody is typing into. */
const NON_INTERACTIVE: readonly (readonly [string, string])[] = [
  ['GIT_PAGER', 'more.com'],
  ['PAGER', 'more.com'],
];

export interface WindowsSandboxEnv {
  /** The request's environment with the additions; nothing of the request is changed or dropped. */
  env: Record<string, string>;
  /** What was added. */
  added: Record<string, string>;
  /** Variables the plan would have set but the request already had with another value, kept as given. */
  kept: string[];
}

/**
 * The child's environment: every variable of the request, plus ux's marker, non-interactive pagers and,
 * when the network is restricted, the advisory network settings (nothing for a proxied network, which the
 * planner refuses unless an outer sandbox decides the network). Windows names are case-insensitive, so
 * `http_proxy` already set counts as `HTTP_PROXY` set. Values are never changed: that is the contract.
 */
export function windowsSandboxEnv(
  env: Readonly<Record<string, string>>,
  network: NetworkPolicy,
): WindowsSandboxEnv {
  const result = { ...env };
  const present = new Map(Object.keys(env).map((name) => [name.toUpperCase(), name]));
  const added: Record<string, string> = {};
  const kept: string[] = [];
  const wanted = [
    ['UX_SANDBOX', 'windows-token'] as const,
    ...NON_INTERACTIVE,
    ...(network === 'restricted' ? NO_NETWORK : []),
  ];
  for (const [name, value] of wanted) {
    const existing = present.get(name);
    if (existing === undefined) {
      result[name] = value;
      added[name] = value;
    } else if (env[existing] !== value) {
      kept.push(existing);
    }
  }
  return { env: result, added, kept };
}
