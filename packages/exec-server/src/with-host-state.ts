import type { EffectivePolicy, HostState } from '@ux/protocol';

/**
 * `policy` with this host's `HostState` added: what the server's sandboxes keep out of reach whatever
 * the client asked (a client's policy comes over the wire and knows nothing of this host's ux files).
 * Lists are merged; nothing the policy already had is lost.
 */
export function withHostState(policy: EffectivePolicy, hostState: HostState | undefined): EffectivePolicy {
  if (!hostState) return policy;
  const merged = (a: readonly string[] | undefined, b: readonly string[] | undefined) => [
    ...new Set([...(a ?? []), ...(b ?? [])]),
  ];
  const readOnly = merged(policy.hostState?.readOnly, hostState.readOnly);
  const hidden = merged(policy.hostState?.hidden, hostState.hidden);
  return {
    ...policy,
    hostState: {
      ...(readOnly.length > 0 ? { readOnly } : {}),
      ...(hidden.length > 0 ? { hidden } : {}),
    },
  };
}
