import type { DenialReason } from './network-decider.js';
import type { HostKind } from './normalize-host.js';

export interface DenialDescription {
  host: string;
  kind: HostKind;
  denial: DenialReason;
  /** The deny entry, for `deny_list`. */
  pattern?: string;
  /** The answer or the failure, for `refused` and `ask_failed`; the local addresses for `local_address`. */
  detail?: string;
  /** Whether the proxy asks about unknown hosts (changes the advice). */
  canAsk: boolean;
}

/**
 * The text a sandboxed client gets with a refusal (the body of the 403): which host, which rule, and
 * what a person can change. It starts with `ux:` so a denial heuristic (and a person reading curl's
 * output) can tell it from the destination's own 403.
 */
export function describeDenial(denial: DenialDescription): string {
  const what = denial.kind === 'name' ? `"${denial.host}"` : `${denial.host} (an IP address)`;
  const access = `ux: network access to ${what}`;
  switch (denial.denial) {
    case 'deny_list':
      return `${access} is not allowed by the sandbox's network policy (deny list: it matches ${JSON.stringify(denial.pattern ?? denial.host)} in network.deny, which wins over network.allow); remove that entry to allow it`;
    case 'not_in_allow_list':
      return denial.kind === 'name'
        ? `${access} is not allowed by the sandbox's network policy (it is not in network.allow); add it to network.allow${denial.canAsk ? ' or approve it when asked' : ''}`
        : `${access} is not allowed by the sandbox's network policy (an IP address is reached only when it is listed itself in network.allow); add it there${denial.canAsk ? ' or approve it when asked' : ''}`;
    case 'outside_cap':
      return `${access} is not allowed by the sandbox's network policy: it is outside the network.allow list an administrator pinned in the requirements, so it cannot be approved here; ask the administrator to add it there`;
    case 'refused':
      return denial.detail === 'deny_session'
        ? `${access} was refused when approval was asked, for the rest of this session`
        : `${access} was refused when approval was asked`;
    case 'ask_failed':
      return `${access} could not be approved (${denial.detail ?? 'the approval failed'}); it is refused`;
    case 'local_address':
      return `${access} is refused: ${denial.detail ?? 'the name resolves only to local or private addresses'}; the proxy connects a name to such addresses only when the name is listed exactly in network.allow`;
    case 'cancelled':
      return `${access} was not decided: the connection ended while approval was asked`;
  }
}

/**
 * The host and the reason in a few words, for the refusal's status line (`403 Blocked by ux network
 * policy: example.com is not in network.allow`): clients that print only the status line (Python's
 * `Tunnel connection failed: 403 …`) still tell the model which host and why. The host is the
 * proxy's normalised form (ASCII, no spaces), so the phrase is a valid HTTP reason phrase.
 */
export function briefDenial(denial: Pick<DenialDescription, 'host' | 'denial'>): string {
  const host = denial.host;
  switch (denial.denial) {
    case 'deny_list':
      return `${host} is in network.deny`;
    case 'not_in_allow_list':
      return `${host} is not in network.allow`;
    case 'outside_cap':
      return `${host} is outside the administrator's network.allow`;
    case 'refused':
      return `${host} was refused when approval was asked`;
    case 'ask_failed':
      return `${host} could not be approved`;
    case 'local_address':
      return `${host} leads only to local or private addresses`;
    case 'cancelled':
      return `${host} was not decided`;
  }
}
