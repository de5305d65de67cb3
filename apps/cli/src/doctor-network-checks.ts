import { statSync } from 'node:fs';
import type { ResolvedNetwork } from '@ux/config';
import { asksAboutHosts } from '@ux/orchestrator';
import { approvalPolicyName } from '@ux/protocol/core';
import type { CliSession } from './cli-session.js';
import type { DoctorCheck } from './doctor-command.js';

/**
 * The network sandboxed commands get and the unix sockets they may reach, each part with where it came
 * from (a config file:line, a flag, the requirements). A listed socket that is not there now is a
 * `warn`: commands run, they just cannot connect to it.
 */
export function doctorNetworkChecks(session: CliSession): DoctorCheck[] {
  const { network, allowUnixSockets, sandboxMode, approvalPolicy } = session.settings;
  // Under `never` (or granular without sandbox approvals) the reviewer chain refuses without asking.
  const policy = approvalPolicy.value;
  const nobodyAsked = asksAboutHosts(policy)
    ? undefined
    : `approval policy ${approvalPolicyName(policy)} (${approvalPolicy.source})`;
  const checks: DoctorCheck[] = [
    { name: 'network', status: 'ok', detail: describeNetwork(network, nobodyAsked) },
  ];
  if (sandboxMode.value === 'danger-full-access') {
    checks.push({ name: 'unix sockets', status: 'ok', detail: 'every one (no sandbox in this mode)' });
    return checks;
  }
  if (allowUnixSockets.length === 0)
    checks.push({
      name: 'unix sockets',
      status: 'ok',
      detail: 'none allowed: every unix socket outside the sandbox is out of reach (allow_unix_sockets)',
    });
  for (const entry of allowUnixSockets) {
    const problem = socketProblem(entry.path);
    checks.push({
      name: 'unix sockets',
      status: problem ? 'warn' : 'ok',
      detail: `allowed: ${entry.path} (${entry.source})${problem ? `; ${problem}, so commands cannot connect to it now` : ''}`,
      ...(problem ? { fix: `start what listens there, or remove it (${entry.source})` } : {}),
    });
  }
  return checks;
}

/** One line: the mode with its source, the lists with theirs, the question policy, and the cap. */
export function describeNetwork(network: ResolvedNetwork, nobodyAsked?: string): string {
  const parts: string[] = [];
  if (network.mode === 'off') parts.push(`off (${network.source})`);
  else if (network.mode === 'on') parts.push(`on: the host's network (${network.source})`);
  else {
    const list = (entries: ResolvedNetwork['allow']) =>
      entries.length === 0 ? 'none' : entries.map((entry) => `${entry.pattern} (${entry.source})`).join(', ');
    parts.push(
      `by domain, through ux's allow-list proxy (${network.source})`,
      `allow ${list(network.allow)}`,
      `deny ${list(network.deny)}`,
      network.askUnknown.value && nobodyAsked
        ? `other hosts: denied without a question (${nobodyAsked})`
        : `other hosts: ${network.askUnknown.value ? 'asked about' : 'denied without a question'} (${network.askUnknown.source})`,
    );
  }
  const cap = network.cap;
  if (cap) {
    const capped =
      cap.mode === 'domains'
        ? `by domain only, allow [${cap.allow.join(', ')}]${cap.deny.length > 0 ? `, deny [${cap.deny.join(', ')}]` : ''}${cap.askUnknown === false ? ', no questions' : ''}`
        : cap.mode === 'off'
          ? 'off'
          : 'on (no cap)';
    parts.push(`requirements: ${capped} (${cap.source})`);
  }
  return parts.join('; ');
}

function socketProblem(path: string): string | undefined {
  try {
    return statSync(path).isSocket() ? undefined : 'it is not a socket';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? 'it does not exist' : `it cannot be checked (${code})`;
  }
}
