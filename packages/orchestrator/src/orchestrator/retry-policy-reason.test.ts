import { SandboxDeniedError } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { retryPolicyReason } from './retry-policy-reason.js';

const denial = (output: string) => new SandboxDeniedError({ sandboxType: 'bwrap', exitCode: 1, output });

describe('retryPolicyReason', () => {
  it('quotes the last line the denied run printed, shortened to 160 characters', () => {
    expect(
      retryPolicyReason({ networkContext: null, denial: denial('a\ntouch: /etc/x: Permission denied\n') }),
    ).toBe('the sandbox blocked it (touch: /etc/x: Permission denied)');
    expect(retryPolicyReason({ networkContext: null, denial: denial('x'.repeat(200)) })).toBe(
      `the sandbox blocked it (${'x'.repeat(160)}…)`,
    );
  });

  it('gives the exit code when nothing was printed, and the host for a network block', () => {
    expect(retryPolicyReason({ networkContext: null, denial: denial('') })).toBe(
      'the sandbox blocked it (exit code 1)',
    );
    expect(
      retryPolicyReason({ networkContext: { host: 'example.com', protocol: 'https' }, denial: denial('') }),
    ).toBe('the sandbox blocked network access to "example.com"');
  });
});
