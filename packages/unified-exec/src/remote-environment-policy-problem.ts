import type { EffectivePolicy } from '@ux/protocol/core';

/**
 * Why a policy cannot be applied in a remote environment, or undefined: a network by domain (the proxy
 * is this machine's) and a unix socket list (the exec-server wire carries neither). `createUnifiedExec`
 * refuses such a policy when its default environment is remote; calls sent elsewhere are refused by the
 * exec-server codec.
 */
export function remoteEnvironmentPolicyProblem(
  policy: Pick<EffectivePolicy, 'network' | 'allowUnixSockets'>,
  environmentId: string,
): string | undefined {
  const where = `commands run in the remote environment "${environmentId}", and an exec-server`;
  if (policy.network === 'proxied')
    return `network by domain cannot be used there: ${where} cannot reach this machine's allow-list proxy; give that environment the network on or off`;
  const [socket] = policy.allowUnixSockets ?? [];
  if (socket !== undefined)
    return `allow_unix_sockets entry "${socket}" cannot be used there: ${where} cannot be told which unix sockets to allow`;
  return undefined;
}
