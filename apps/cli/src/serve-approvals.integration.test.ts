// The inbox on a real control socket (a temporary runtime root, both ends in this process): the
// approvals.* methods, their error codes and the watch events.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type ControlServer, connectControl, startControlServer } from '@ux/control';
import type { ApprovalRequest } from '@ux/protocol/core';
import { tempDir, useLeakCheck } from '@ux/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import { ApprovalInbox, type PendingApproval } from './approval-inbox.js';
import { serveApprovals } from './serve-approvals.js';

useLeakCheck();

const servers: ControlServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const request: ApprovalRequest = {
  call_id: 'mcp-7',
  command: ['touch', 'x'],
  cwd: '/work',
  retry: false,
  unsandboxed: 'never',
  available_decisions: ['approved', 'denied', 'abort'],
};

async function served() {
  const runtimeRoot = join(tempDir('ux-approvals-'), 'ux');
  mkdirSync(runtimeRoot, { mode: 0o700 });
  const server = await startControlServer({ kind: 'mcp', cwd: '/work', version: '0.0.0', runtimeRoot });
  servers.push(server);
  const inbox = new ApprovalInbox({ ruleFile: '/rules/default.rules' });
  serveApprovals(server, inbox);
  const client = await connectControl(process.pid, { runtimeRoot });
  return { inbox, client };
}

describe('serveApprovals', () => {
  it('lists, watches and answers; removal events say why', async () => {
    const { inbox, client } = await served();
    const events: { event: string; params: unknown }[] = [];
    client.on('approvals.added', (params) => events.push({ event: 'added', params }));
    const removed = new Promise<unknown>((resolve) => client.on('approvals.removed', resolve));
    expect(await client.call('approvals.watch')).toEqual({ approvals: [] });
    const answer = inbox.ask(request, { signal: new AbortController().signal });
    const listed = (await client.call('approvals.list')) as { approvals: PendingApproval[] };
    expect(listed.approvals.map((approval) => approval.id)).toEqual([`${process.pid}:1`]);
    // The event was sent before the list's answer, on the same connection.
    expect(events).toEqual([{ event: 'added', params: listed.approvals[0] }]);
    expect(await client.call('approvals.answer', { id: `${process.pid}:1`, decision: 'deny' })).toEqual({
      id: `${process.pid}:1`,
      decision: 'denied',
      label: 'deny',
    });
    await expect(answer).resolves.toEqual({ type: 'denied' });
    expect(await removed).toEqual({ id: `${process.pid}:1`, reason: 'answered', decision: 'denied' });
    client.close();
  });

  it('answers bad_request for malformed params and an offered-nowhere decision, not_found for an unknown id', async () => {
    const { inbox, client } = await served();
    void inbox.ask(request, { signal: new AbortController().signal });
    const id = `${process.pid}:1`;
    const code = (params: Record<string, unknown>) =>
      client.call('approvals.answer', params).then(
        () => 'ok',
        (error: { controlCode: string; message: string }) => `${error.controlCode}: ${error.message}`,
      );
    expect(await code({ id })).toMatch(/^bad_request: approvals.answer needs/);
    expect(await code({ id, decision: 'approve-session' })).toBe(
      `bad_request: question ${id} does not offer "approve-session"; it offers approve, deny, abort`,
    );
    expect(await code({ id: '1:1', decision: 'approve' })).toBe(
      `not_found: no pending question "1:1" here; pending: ${id}`,
    );
    expect(inbox.list()).toHaveLength(1);
    expect(await code({ id, decision: 'x' })).toBe('ok');
    expect(inbox.list()).toEqual([]);
    client.close();
  });
});
