import type { EffectivePolicy } from '../policy/file-system-policy.js';

/**
 * What a sandbox backend can enforce, one guarantee each. A backend declares the ones it enforces here
 * (its probe's `enforces`); a policy runs only on a backend that enforces every one the policy needs
 * (`policyNeeds`). A backend that declares nothing enforces nothing and runs no sandboxed policy.
 */
export const SANDBOX_CAPABILITIES = [
  /**
   * Writes (contents, names, links) land only inside the policy's writable roots. A backend that
   * cannot also hold mode bits and times there (Landlock) says so in its plans' notes.
   */
  'write_limits',
  /** Protected names inside writable roots (`.git`, `.ux`, start-up files, ux's state) stay read-only; created ones are pre-empted or taken away. */
  'protected_names',
  /** Deny-read entries and ux's hidden directories (`hostState.hidden`) cannot be read. */
  'read_deny',
  /** `network: restricted`: no network and no unix socket of the host. */
  'network_off',
  /** `network: proxied`: the only way out is the host's allow-list proxy. */
  'network_by_domain',
  /** `allowUnixSockets`: the listed host unix sockets and no other. */
  'unix_socket_control',
  /** `privateTmp`: `/tmp` and `$TMPDIR` private to the session; the host's cannot be read. */
  'private_tmp',
  /** Host processes cannot be seen, signalled or traced from inside. */
  'process_isolation',
  /** CPU, memory or process-count limits. */
  'resource_limits',
] as const;

export type SandboxCapability = (typeof SANDBOX_CAPABILITIES)[number];

/** One guarantee a policy needs, and the part of the policy that needs it. */
export interface PolicyNeed {
  capability: SandboxCapability;
  /** Plain words: "the policy limits writes to its writable roots". */
  because: string;
}

/**
 * The guarantees a sandboxed policy needs from its backend; none under `external-sandbox`, whose outer
 * sandbox enforces it. `process_isolation` and `resource_limits`
 * are never needed (no policy field asks for them); backends declare them so people can compare.
 */
export function policyNeeds(policy: EffectivePolicy): PolicyNeed[] {
  const needs: PolicyNeed[] = [];
  const fs = policy.fileSystem;
  // An outer sandbox enforces the whole policy (as `needsSandbox` of the orchestrator has it).
  if (fs.kind === 'external-sandbox') return needs;
  if (fs.kind === 'restricted') {
    needs.push({ capability: 'write_limits', because: 'the policy limits writes to its writable roots' });
    if (fs.entries.some((entry) => entry.access === 'write') || (policy.hostState?.readOnly?.length ?? 0) > 0)
      needs.push({
        capability: 'protected_names',
        because: 'protected names inside the writable roots must stay read-only',
      });
    if (fs.entries.some((entry) => entry.access === 'none') || (policy.hostState?.hidden?.length ?? 0) > 0)
      needs.push({
        capability: 'read_deny',
        because: "the policy denies reading some paths (deny_read, ux's hidden directories)",
      });
  }
  if (policy.network === 'restricted')
    needs.push({ capability: 'network_off', because: 'the network is off' });
  else if (policy.network === 'proxied')
    needs.push({
      capability: 'network_by_domain',
      because: 'the network is allowed by domain, through the proxy',
    });
  if ((policy.allowUnixSockets?.length ?? 0) > 0)
    needs.push({
      capability: 'unix_socket_control',
      because: `the policy allows some unix sockets (${policy.allowUnixSockets!.join(', ')}) and no others`,
    });
  if (policy.privateTmp) needs.push({ capability: 'private_tmp', because: '/tmp is private to the session' });
  return needs;
}

/** The needs a backend's declaration leaves unmet, in the order `policyNeeds` gives them. */
export function unmetNeeds(
  needs: readonly PolicyNeed[],
  enforces: readonly SandboxCapability[] | undefined,
): PolicyNeed[] {
  return needs.filter((need) => !enforces?.includes(need.capability));
}
