import { describe, expect, it } from 'vitest';
import { deferred } from '../test/test-kit.js';
import { compileDomainPolicy } from './domain-policy.js';
import { createNetworkDecider, type NetworkAccessRequest, type NetworkAskAnswer } from './network-decider.js';
import { normalizeHost } from './normalize-host.js';

const target = (host: string, port = 443) => ({ host: normalizeHost(host)!, port });
const never = new AbortController().signal;

function askedWith(answers: (NetworkAskAnswer | Error)[]) {
  const calls: { request: NetworkAccessRequest; signal: AbortSignal }[] = [];
  const pending = answers.map(() => deferred<NetworkAskAnswer | Error>());
  const ask = async (request: NetworkAccessRequest, { signal }: { signal: AbortSignal }) => {
    calls.push({ request, signal });
    const answer = await pending[calls.length - 1]!.promise;
    if (answer instanceof Error) throw answer;
    return answer;
  };
  const answer = (index: number) => pending[index]!.resolve(answers[index]!);
  return { ask, calls, answer };
}

describe('the decision per host', () => {
  it('lists decide without asking; unknown hosts are denied when there is no ask', async () => {
    const decider = createNetworkDecider({
      policy: compileDomainPolicy({ allow: ['allowed.test', '*.wild.test'], deny: ['denied.test'] }),
    });
    expect(await decider.decide(target('allowed.test'), 'https', never)).toEqual({
      allowed: true,
      decision: 'allowed',
      decidedBy: 'policy',
      explicit: true,
    });
    expect(await decider.decide(target('a.wild.test'), 'https', never)).toMatchObject({
      allowed: true,
      explicit: false,
    });
    expect(await decider.decide(target('denied.test'), 'http', never)).toEqual({
      allowed: false,
      decision: 'denied',
      decidedBy: 'policy',
      denial: 'deny_list',
      pattern: 'denied.test',
    });
    expect(await decider.decide(target('unknown.test'), 'socks5', never)).toEqual({
      allowed: false,
      decision: 'denied',
      decidedBy: 'policy',
      denial: 'not_in_allow_list',
    });
  });

  it('asks only about hosts inside the administrator cap (askable); others are refused unasked', async () => {
    const { ask, calls, answer } = askedWith(['allow_once']);
    const decider = createNetworkDecider({
      policy: compileDomainPolicy({ allow: ['api.test'], askable: ['*.corp.test', 'github.com:443'] }),
      ask,
    });
    expect(await decider.decide(target('evil.test'), 'https', never)).toEqual({
      allowed: false,
      decision: 'denied',
      decidedBy: 'policy',
      denial: 'outside_cap',
    });
    // A port the cap entry does not cover is outside it too.
    expect(await decider.decide(target('github.com', 22), 'socks5', never)).toMatchObject({
      allowed: false,
      denial: 'outside_cap',
    });
    expect(calls).toHaveLength(0);
    const inside = decider.decide(target('build.corp.test'), 'https', never);
    await Promise.resolve();
    answer(0);
    expect(await inside).toMatchObject({ allowed: true, decision: 'asked_allowed' });
    expect(calls.map((call) => call.request.host)).toEqual(['build.corp.test']);
  });

  it('refuses a policy whose askable is not a list', () => {
    expect(() => compileDomainPolicy({ allow: [], askable: 'x' as unknown as string[] })).toThrow(
      'network.askable must be a list of patterns',
    );
  });

  it('concurrent connections to one host share one question; allow_session is remembered', async () => {
    const { ask, calls, answer } = askedWith(['allow_session']);
    const decider = createNetworkDecider({ policy: compileDomainPolicy({ allow: [] }), ask });
    const verdicts = Promise.all([
      decider.decide(target('unknown.test', 443), 'https', never),
      decider.decide(target('UNKNOWN.test.', 80), 'http', never),
      decider.decide(target('unknown.test', 22), 'socks5', never),
    ]);
    await Promise.resolve();
    expect(calls.map((call) => call.request)).toEqual([
      { host: 'unknown.test', port: 443, protocol: 'https' },
    ]);
    answer(0);
    expect((await verdicts).map((verdict) => [verdict.decision, verdict.decidedBy])).toEqual([
      ['asked_allowed', 'ask'],
      ['asked_allowed', 'ask'],
      ['asked_allowed', 'ask'],
    ]);
    expect(await decider.decide(target('unknown.test', 8080), 'http', never)).toMatchObject({
      decision: 'asked_allowed',
      decidedBy: 'session',
    });
    expect(calls).toHaveLength(1);
  });

  it('deny and allow_once hold for the waiting connections only; the next one asks again', async () => {
    const { ask, calls, answer } = askedWith(['deny', 'allow_once', 'deny']);
    const decider = createNetworkDecider({ policy: compileDomainPolicy({ allow: [] }), ask });
    const first = decider.decide(target('unknown.test'), 'https', never);
    answer(0);
    expect(await first).toMatchObject({ decision: 'asked_denied', denial: 'refused', detail: 'deny' });
    const second = decider.decide(target('unknown.test'), 'https', never);
    await Promise.resolve();
    answer(1);
    expect(await second).toMatchObject({ decision: 'asked_allowed', decidedBy: 'ask' });
    const third = decider.decide(target('unknown.test'), 'https', never);
    await Promise.resolve();
    answer(2);
    expect(await third).toMatchObject({ decision: 'asked_denied' });
    expect(calls).toHaveLength(3);
  });

  it('deny_session is remembered; other hosts are still asked', async () => {
    const { ask, calls, answer } = askedWith(['deny_session', 'allow_once']);
    const decider = createNetworkDecider({ policy: compileDomainPolicy({ allow: [] }), ask });
    const first = decider.decide(target('unknown.test'), 'https', never);
    answer(0);
    expect(await first).toMatchObject({ decision: 'asked_denied', decidedBy: 'ask', detail: 'deny_session' });
    expect(await decider.decide(target('unknown.test'), 'http', never)).toMatchObject({
      decision: 'asked_denied',
      decidedBy: 'session',
      denial: 'refused',
    });
    const other = decider.decide(target('other.test'), 'https', never);
    await Promise.resolve();
    answer(1);
    expect(await other).toMatchObject({ decision: 'asked_allowed' });
    expect(calls.map((call) => call.request.host)).toEqual(['unknown.test', 'other.test']);
  });

  it('a failing or nonsensical answer denies, is not remembered, and says why', async () => {
    const { ask, calls, answer } = askedWith([
      new Error('the reviewer is offline'),
      'maybe' as NetworkAskAnswer,
    ]);
    const decider = createNetworkDecider({ policy: compileDomainPolicy({ allow: [] }), ask });
    const first = decider.decide(target('unknown.test'), 'https', never);
    answer(0);
    expect(await first).toMatchObject({ denial: 'ask_failed', detail: 'the reviewer is offline' });
    const second = decider.decide(target('unknown.test'), 'https', never);
    await Promise.resolve();
    answer(1);
    expect(await second).toMatchObject({
      denial: 'ask_failed',
      detail: expect.stringContaining('"maybe" is not one of'),
    });
    expect(calls).toHaveLength(2);
  });

  it('the question is withdrawn (its signal aborted) only when every waiting connection left', async () => {
    const { ask, calls, answer } = askedWith(['allow_once']);
    const decider = createNetworkDecider({ policy: compileDomainPolicy({ allow: [] }), ask });
    const left = new AbortController();
    const stays = new AbortController();
    const leaving = decider.decide(target('unknown.test'), 'https', left.signal);
    const staying = decider.decide(target('unknown.test'), 'https', stays.signal);
    await Promise.resolve();
    left.abort();
    expect(await leaving).toMatchObject({ decision: 'asked_denied', denial: 'cancelled' });
    expect(calls[0]!.signal.aborted).toBe(false);
    const late = new AbortController();
    const joining = decider.decide(target('unknown.test'), 'https', late.signal);
    stays.abort();
    late.abort();
    expect(await staying).toMatchObject({ denial: 'cancelled' });
    expect(await joining).toMatchObject({ denial: 'cancelled' });
    expect(calls[0]!.signal.aborted).toBe(true);
    answer(0);
    // A withdrawn question is not remembered: allow_once was its answer, and the next connection asks anew.
    expect(calls).toHaveLength(1);
  });

  it('a new policy applies to the next decision; session answers stay', async () => {
    const { ask, answer } = askedWith(['allow_session']);
    const decider = createNetworkDecider({ policy: compileDomainPolicy({ allow: [] }), ask });
    const first = decider.decide(target('asked.test'), 'https', never);
    answer(0);
    await first;
    decider.setPolicy(compileDomainPolicy({ allow: ['new.test'], deny: ['asked.test'] }));
    expect(await decider.decide(target('new.test'), 'https', never)).toMatchObject({ decision: 'allowed' });
    // The deny list wins over a remembered answer.
    expect(await decider.decide(target('asked.test'), 'https', never)).toMatchObject({ denial: 'deny_list' });
  });
});
