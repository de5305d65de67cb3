import {
  type EffectivePolicy,
  type LaunchPlan,
  policyNeeds,
  type SandboxCapability,
} from '@ux/protocol/core';

const FILE_SYSTEM: readonly SandboxCapability[] = [
  'write_limits',
  'protected_names',
  'read_deny',
  'private_tmp',
];
const NETWORK: readonly SandboxCapability[] = ['network_off', 'network_by_domain', 'unix_socket_control'];

/**
 * What a backend's plan says it does not enforce although the policy needs it: a plan whose
 * `enforcement.fileSystem` (or `.network`) is `none` for a policy that limits the file system (or the
 * network). The selection trusted the backend's declaration; its plan contradicts it, so the command
 * must not run (a backend that enforced nothing once ran `touch /etc/x` with exit 0). Undefined: no
 * contradiction. `advisory` is not one: the plan's notes say what it holds.
 */
export function planContradiction(plan: LaunchPlan, policy: EffectivePolicy): string | undefined {
  const needs = policyNeeds(policy).map((need) => need.capability);
  const problems: string[] = [];
  const fileSystem = needs.filter((need) => FILE_SYSTEM.includes(need));
  if (plan.enforcement.fileSystem === 'none' && fileSystem.length > 0)
    problems.push(
      `no file-system limits (enforcement.fileSystem = "none"; the policy needs ${fileSystem.join(', ')})`,
    );
  const network = needs.filter((need) => NETWORK.includes(need));
  if (plan.enforcement.network === 'none' && network.length > 0)
    problems.push(`no network limits (enforcement.network = "none"; the policy needs ${network.join(', ')})`);
  if (problems.length === 0) return undefined;
  return `the ${plan.sandboxType} sandbox's plan for this command enforces ${problems.join(' and ')}, although the backend declares it enforces them`;
}
