import { describe, expect, it } from 'vitest';
import { briefDenial, describeDenial } from './describe-denial.js';
import type { DenialReason } from './network-decider.js';

const REASONS: readonly [DenialReason, string][] = [
  ['deny_list', 'example.com is in network.deny'],
  ['not_in_allow_list', 'example.com is not in network.allow'],
  ['outside_cap', "example.com is outside the administrator's network.allow"],
  ['refused', 'example.com was refused when approval was asked'],
  ['ask_failed', 'example.com could not be approved'],
  ['local_address', 'example.com leads only to local or private addresses'],
  ['cancelled', 'example.com was not decided'],
];

describe('briefDenial', () => {
  it.each(REASONS)('%s: names the host and the reason in a few words', (denial, brief) => {
    expect(briefDenial({ host: 'example.com', denial })).toBe(brief);
  });

  it('is a valid HTTP reason phrase (visible ASCII and spaces only) for every reason', () => {
    for (const [denial] of REASONS) {
      expect(briefDenial({ host: 'xn--bcher-kva.example', denial })).toMatch(/^[\x20-\x7e]+$/);
    }
  });

  it('agrees with the body on what a reader needs to tell the reasons apart', () => {
    for (const [denial] of REASONS) {
      const body = describeDenial({ host: 'example.com', kind: 'name', denial, canAsk: false });
      expect(body.startsWith('ux: network access to "example.com"')).toBe(true);
    }
  });
});
