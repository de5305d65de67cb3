import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { EffectivePolicy, ReviewDecision } from '@ux/protocol';
import { createSandboxRegistry } from '@ux/protocol-utils';
import { tempDir } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { DENY_READ, fakeBackend, recordingReviewer, WORKSPACE_WRITE } from '../../test/fakes.js';
import { createOrchestrator } from './create-orchestrator.js';
import { PATCH_OUTSIDE_NEVER } from './decide-patch.js';

function setup(
  options: {
    approvalPolicy?: 'untrusted' | 'on-request' | 'never';
    policy?: EffectivePolicy;
    answer?: ReviewDecision;
  } = {},
) {
  const reviewer = recordingReviewer(options.answer ?? { type: 'approved' });
  const orchestrator = createOrchestrator({
    sandboxRegistry: createSandboxRegistry({ fake: fakeBackend('fake') }),
    platform: 'linux',
    approvalPolicy: options.approvalPolicy ?? 'on-request',
    policy: options.policy ?? WORKSPACE_WRITE,
    reviewer,
  });
  const root = realpathSync(tempDir('ux-decide-patch-'));
  const workspace = join(root, 'workspace');
  mkdirSync(join(workspace, '.git', 'hooks'), { recursive: true });
  writeFileSync(join(workspace, '.git', 'config'), '[core]\n');
  const decide = (paths: string[]) =>
    orchestrator.decidePatch({
      callId: 'call-1',
      cwd: workspace,
      projectRoot: workspace,
      paths,
      summary: 'M x',
    });
  return { reviewer, decide, workspace, root };
}

describe('decidePatch', () => {
  it('applies a patch inside the writable roots without asking', async () => {
    const { decide, workspace, reviewer } = setup();
    expect(await decide([join(workspace, 'src', 'a.ts'), join(workspace, 'new.txt')])).toEqual({
      action: 'apply',
      autoApproved: true,
    });
    expect(reviewer.requests).toEqual([]);
  });

  it('asks about a path outside, and approved, applies; denied, refuses', async () => {
    const approved = setup();
    const outside = join(dirname(approved.workspace), 'outside.txt');
    expect(await approved.decide([outside])).toEqual({ action: 'apply', autoApproved: false });
    expect(approved.reviewer.requests[0]).toMatchObject({
      command: ['apply_patch', outside],
      policy_reason: `the patch writes outside the writable roots: ${outside}`,
      unsandboxed: 'now',
      available_decisions: ['approved', 'denied', 'abort'],
    });
    const denied = setup({ answer: { type: 'denied' } });
    // With the refusal itself: who decided (the person) reaches the model.
    expect(await denied.decide([join(dirname(denied.workspace), 'outside.txt')])).toEqual({
      action: 'refuse',
      reason: 'rejected by the user',
      cause: expect.objectContaining({ source: 'user', reason: 'rejected by the user' }),
    });
  });

  it('refuses protected and hidden paths whatever anyone would answer', async () => {
    const { decide, workspace, reviewer } = setup();
    const config = join(workspace, '.git', 'config');
    expect(await decide([config])).toMatchObject({
      action: 'refuse',
      reason: expect.stringMatching(/^.*\.git\/config is protected \(/),
    });
    expect(await decide([join(workspace, '.git', 'hooks', 'pre-commit')])).toMatchObject({
      action: 'refuse',
    });
    expect(reviewer.requests).toEqual([]);
    const hidden = setup({ policy: DENY_READ });
    expect(await hidden.decide([join(hidden.workspace, 'prod.env')])).toMatchObject({
      action: 'refuse',
      reason: expect.stringContaining('hidden by the deny-read policy'),
    });
  });

  it('names a refused path with escapes, never with its control characters', async () => {
    const { decide, workspace } = setup({ policy: DENY_READ });
    const decision = await decide([join(workspace, 'w\x1b]0;owned\x07\rx.env')]);
    expect(decision).toEqual({
      action: 'refuse',
      reason: `${workspace}/w\\e]0;owned\\x07\\rx.env is hidden by the deny-read policy; the patch was not applied`,
    });
  });

  it('refuses protected names of a workspace that lies inside another writable root', async () => {
    // The workspace is below a --writable-root parent (the temp dir): two writable roots hold its
    // .git/config, and the outer one has no entry for it.
    for (const parentPolicy of ['writable-root', 'tmp'] as const) {
      const base = setup();
      const parent = dirname(base.workspace);
      const policy: EffectivePolicy = {
        ...WORKSPACE_WRITE,
        fileSystem: {
          kind: 'restricted',
          entries: [
            ...(WORKSPACE_WRITE.fileSystem.kind === 'restricted' ? WORKSPACE_WRITE.fileSystem.entries : []),
            parentPolicy === 'writable-root'
              ? { path: { type: 'path', path: parent }, access: 'write' }
              : { path: { type: 'path', path: dirname(parent) }, access: 'write' },
          ],
        },
      };
      const nested = setup({ policy });
      const decide = (paths: string[]) =>
        createOrchestrator({
          sandboxRegistry: createSandboxRegistry({ fake: fakeBackend('fake') }),
          platform: 'linux',
          approvalPolicy: 'on-request',
          policy,
          reviewer: nested.reviewer,
        }).decidePatch({
          callId: 'c',
          cwd: base.workspace,
          projectRoot: base.workspace,
          paths,
          summary: 'M x',
        });
      for (const name of [
        '.git/config',
        '.git/hooks/pre-commit',
        '.git/commondir',
        '.ux/config.toml',
        '.codex/config.toml',
        '.agents/skill.md',
      ])
        expect(await decide([join(base.workspace, name)]), `${parentPolicy}: ${name}`).toMatchObject({
          action: 'refuse',
          reason: expect.stringContaining('is protected'),
        });
      expect(await decide([join(base.workspace, 'src', 'a.ts')])).toEqual({
        action: 'apply',
        autoApproved: true,
      });
      expect(nested.reviewer.requests).toEqual([]);
    }
  });

  it('refuses outside paths under never, and asks about every patch under untrusted', async () => {
    const never = setup({ approvalPolicy: 'never' });
    expect(await never.decide([join(dirname(never.workspace), 'o.txt')])).toEqual({
      action: 'refuse',
      reason: PATCH_OUTSIDE_NEVER,
    });
    const untrusted = setup({ approvalPolicy: 'untrusted' });
    expect(await untrusted.decide([join(untrusted.workspace, 'a.txt')])).toEqual({
      action: 'apply',
      autoApproved: false,
    });
    expect(untrusted.reviewer.requests).toHaveLength(1);
  });
});
