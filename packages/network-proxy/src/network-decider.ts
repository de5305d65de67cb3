import type { CompiledDomainPolicy } from './domain-policy.js';
import type { NormalizedHost } from './normalize-host.js';

/** How a client reached the proxy: plain HTTP request, HTTP CONNECT, or SOCKS5 CONNECT. */
export type ProxyProtocol = 'http' | 'https' | 'socks5';

/** What the owner's `ask` is asked: a host outside both lists. Assignable to the protocol's `NetworkApprovalContext`. */
export interface NetworkAccessRequest {
  host: string;
  port: number;
  protocol: ProxyProtocol;
}

/** The owner's answer. `_session` answers are remembered for the host until the proxy closes. */
export type NetworkAskAnswer = 'allow_once' | 'allow_session' | 'deny' | 'deny_session';

/**
 * Asks the host's reviewer chain about a host outside both lists. Concurrent connections to one host
 * share one question. `signal` is aborted when no connection waits for the answer any more (every one of
 * them went away, or the proxy closed): the question can be withdrawn. A throw or an answer outside
 * `NetworkAskAnswer` denies the waiting connections and is not remembered.
 */
export type NetworkAsk = (
  request: NetworkAccessRequest,
  options: { signal: AbortSignal },
) => Promise<NetworkAskAnswer> | NetworkAskAnswer;

export type ConnectionDecision = 'allowed' | 'denied' | 'asked_allowed' | 'asked_denied';

/** Why a connection was refused. */
export type DenialReason =
  /** It matches an entry of `network.deny`. */
  | 'deny_list'
  /** It matches no entry of `network.allow`, and there is no `ask`. */
  | 'not_in_allow_list'
  /** It matches no entry of `network.allow` nor of the administrator's cap (`askable`): never asked. */
  | 'outside_cap'
  /** `ask` answered `deny` or `deny_session` (now, or earlier in the session). */
  | 'refused'
  /** `ask` threw or gave an answer that is not one of the four. */
  | 'ask_failed'
  /** The name resolved only to loopback, private or link-local addresses (see `allowLocalAddresses`). */
  | 'local_address'
  /** The client went away (or the proxy closed) while its question was open. */
  | 'cancelled';

/** Where a decision came from: the lists, an answer given for this connection, or a remembered answer. */
export type DecidedBy = 'policy' | 'ask' | 'session';

export type Verdict =
  | {
      allowed: true;
      decision: 'allowed' | 'asked_allowed';
      decidedBy: DecidedBy;
      /** Allowed by an exact list entry (not a wildcard, not an answer): it may resolve to a local address. */
      explicit: boolean;
    }
  | {
      allowed: false;
      decision: 'denied' | 'asked_denied';
      decidedBy: DecidedBy;
      denial: DenialReason;
      /** The deny entry, for `deny_list`. */
      pattern?: string;
      /** The answer for `refused`, the failure for `ask_failed`. */
      detail?: string;
    };

const ANSWERS: ReadonlySet<string> = new Set(['allow_once', 'allow_session', 'deny', 'deny_session']);

type Outcome = { answer: NetworkAskAnswer } | { failed: string };

interface Question {
  outcome: Promise<Outcome>;
  controller: AbortController;
  waiters: number;
}

export interface NetworkDecider {
  decide(
    target: { host: NormalizedHost; port: number },
    protocol: ProxyProtocol,
    signal: AbortSignal,
  ): Promise<Verdict>;
  setPolicy(policy: CompiledDomainPolicy): void;
}

/**
 * The decision per host: deny list, allow list, remembered session answers, then one shared question
 * per host to `ask` (none: denied). Session answers are keyed by host name, whatever the port.
 */
export function createNetworkDecider(options: {
  policy: CompiledDomainPolicy;
  ask?: NetworkAsk;
}): NetworkDecider {
  let policy = options.policy;
  const { ask } = options;
  const session = new Map<string, 'allow' | 'deny'>();
  const questions = new Map<string, Question>();

  function question(host: string, request: NetworkAccessRequest): Question {
    const open = questions.get(host);
    if (open) return open;
    const controller = new AbortController();
    const created = { controller, waiters: 0 } as Question;
    // In the map before `ask` runs: an ask that settles at once must still be able to remove its entry.
    questions.set(host, created);
    created.outcome = (async (): Promise<Outcome> => {
      try {
        const answer: unknown = await ask!(request, { signal: controller.signal });
        if (typeof answer !== 'string' || !ANSWERS.has(answer))
          return {
            failed: `the approval answer ${JSON.stringify(answer) ?? String(answer)} is not one of allow_once, allow_session, deny, deny_session`,
          };
        if (answer === 'allow_session') session.set(host, 'allow');
        if (answer === 'deny_session') session.set(host, 'deny');
        return { answer: answer as NetworkAskAnswer };
      } catch (error) {
        return { failed: error instanceof Error ? error.message : String(error) };
      } finally {
        if (questions.get(host) === created) questions.delete(host);
      }
    })();
    return created;
  }

  async function waitForAnswer(
    host: string,
    request: NetworkAccessRequest,
    signal: AbortSignal,
  ): Promise<Verdict> {
    const cancelled: Verdict = {
      allowed: false,
      decision: 'asked_denied',
      decidedBy: 'ask',
      denial: 'cancelled',
    };
    if (signal.aborted) return cancelled;
    const open = question(host, request);
    open.waiters += 1;
    let left = false;
    let onAbort: () => void = () => {};
    const aborted = new Promise<'aborted'>((resolve) => {
      onAbort = () => {
        left = true;
        open.waiters -= 1;
        if (open.waiters === 0) open.controller.abort(new Error('no connection waits for this answer'));
        resolve('aborted');
      };
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const outcome = await Promise.race([open.outcome, aborted]);
      if (outcome === 'aborted') return cancelled;
      if ('failed' in outcome)
        return {
          allowed: false,
          decision: 'asked_denied',
          decidedBy: 'ask',
          denial: 'ask_failed',
          detail: outcome.failed,
        };
      if (outcome.answer === 'allow_once' || outcome.answer === 'allow_session')
        return { allowed: true, decision: 'asked_allowed', decidedBy: 'ask', explicit: false };
      return {
        allowed: false,
        decision: 'asked_denied',
        decidedBy: 'ask',
        denial: 'refused',
        detail: outcome.answer,
      };
    } finally {
      signal.removeEventListener('abort', onAbort);
      if (!left) open.waiters -= 1;
    }
  }

  return {
    setPolicy(next) {
      policy = next;
    },
    async decide({ host, port }, protocol, signal) {
      const match = policy.match(host, port);
      if (match?.list === 'deny')
        return {
          allowed: false,
          decision: 'denied',
          decidedBy: 'policy',
          denial: 'deny_list',
          pattern: match.pattern.pattern,
        };
      if (match?.list === 'allow')
        return {
          allowed: true,
          decision: 'allowed',
          decidedBy: 'policy',
          explicit: match.pattern.kind === 'exact',
        };
      const remembered = session.get(host.host);
      if (remembered === 'allow')
        return { allowed: true, decision: 'asked_allowed', decidedBy: 'session', explicit: false };
      if (remembered === 'deny')
        return {
          allowed: false,
          decision: 'asked_denied',
          decidedBy: 'session',
          denial: 'refused',
          detail: 'deny_session',
        };
      if (!ask)
        return { allowed: false, decision: 'denied', decidedBy: 'policy', denial: 'not_in_allow_list' };
      if (!policy.mayAsk(host, port))
        return { allowed: false, decision: 'denied', decidedBy: 'policy', denial: 'outside_cap' };
      return waitForAnswer(host.host, { host: host.host, port, protocol }, signal);
    },
  };
}
