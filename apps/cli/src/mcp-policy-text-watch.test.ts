import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { describe, expect, it, vi } from 'vitest';

const texts = vi.hoisted(() => ({ current: 'policy A' }));
vi.mock('./mcp-policy-words.js', () => ({
  mcpPolicyText: (context: { canElicit: boolean }) => `${texts.current}; can ask: ${context.canElicit}`,
}));

const { watchMcpPolicyText } = await import('./mcp-policy-text-watch.js');

function watch() {
  let notices = 0;
  const server = {
    sendToolListChanged: async () => {
      notices++;
    },
  } as unknown as Server;
  const policyText = watchMcpPolicyText(server, {
    approvalsVia: 'client',
    // The words module is mocked: the context's contents do not matter here.
    session: undefined as never,
    policy: undefined as never,
    cwd: '/work',
    platform: 'linux',
    changes: undefined as never,
  });
  return { policyText, notices: () => notices };
}

describe('watchMcpPolicyText', () => {
  it('asks through the client only when it elicits (approvals_via = client)', () => {
    const { policyText } = watch();
    expect(policyText.text(true)).toBe('policy A; can ask: true');
    expect(policyText.text(false)).toBe('policy A; can ask: false');
  });

  it('notifies a list change only after a listing, and only when the text differs from the listed one', () => {
    texts.current = 'policy A';
    const { policyText, notices } = watch();
    texts.current = 'policy B';
    policyText.changed(true);
    expect(notices()).toBe(0);
    policyText.listed(policyText.text(true));
    policyText.changed(true);
    expect(notices()).toBe(0);
    texts.current = 'policy C';
    policyText.changed(true);
    expect(notices()).toBe(1);
  });
});
