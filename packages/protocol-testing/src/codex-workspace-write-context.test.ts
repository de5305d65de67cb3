import { sandboxContextSchema } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { codexWorkspaceWriteContext } from './codex-workspace-write-context.js';

describe('codexWorkspaceWriteContext', () => {
  it("is a sandbox context the contract's schema reads (the mixed-case workspace-write one)", () => {
    const context = sandboxContextSchema.parse(codexWorkspaceWriteContext('file:///home/dev/proj/ws'));
    expect(context.permissions.type).toBe('managed');
    expect(context.cwd).toBe('file:///home/dev/proj/ws');
  });
});
