import { InvalidArgumentsError, SandboxUnavailableError } from '@ux/protocol';
import { createSandboxRegistry } from '@ux/protocol-utils';
import { describe, expect, it } from 'vitest';
import { fakeBackend, WORKSPACE_WRITE } from '../../test/fakes.js';
import { createSandboxSelector } from '../sandbox/sandbox-selector.js';
import { createEnvironmentSandboxPicker } from './environment-sandbox-picker.js';

const picker = (box = fakeBackend('exec-server')) =>
  createEnvironmentSandboxPicker({
    local: createSandboxSelector({
      sandboxRegistry: createSandboxRegistry({ bwrap: fakeBackend('bwrap') }),
      platform: 'linux',
    }),
    environmentSandboxes: { box },
  });

describe('createEnvironmentSandboxPicker', () => {
  it('picks a local backend for this machine and the environment’s own for a remote one', async () => {
    const pick = picker();
    expect((await pick.pick(undefined, WORKSPACE_WRITE)).backend.id).toBe('bwrap');
    expect((await pick.pick('box', WORKSPACE_WRITE)).backend.id).toBe('exec-server');
  });

  it('knows this machine and the configured environments, and names them for an unknown one', () => {
    const pick = picker();
    expect(() => pick.assertKnown(undefined)).not.toThrow();
    expect(() => pick.assertKnown('box')).not.toThrow();
    expect(() => pick.assertKnown('gpu')).toThrow(InvalidArgumentsError);
    expect(() => pick.assertKnown('gpu')).toThrow(
      /unknown environment "gpu"; known remote environments: box/,
    );
  });

  it('fails closed when the remote probe fails, naming the environment once', async () => {
    const unnamed = picker(
      fakeBackend('exec-server', {
        probe: { available: false, reason: 'connection refused', fix: 'start it' },
      }),
    );
    await expect(unnamed.pick('box', WORKSPACE_WRITE)).rejects.toThrow(SandboxUnavailableError);
    await expect(unnamed.pick('box', WORKSPACE_WRITE)).rejects.toThrow(
      /environment "box": connection refused/,
    );
    const named = picker(
      fakeBackend('exec-server', {
        probe: { available: false, reason: 'cannot reach environment "box"', fix: 'start it' },
      }),
    );
    const error = await named.pick('box', WORKSPACE_WRITE).catch((caught: unknown) => caught);
    expect((error as SandboxUnavailableError).reason).toBe('cannot reach environment "box"');
  });

  it('probes a remote environment on every pick (a live connection)', async () => {
    const box = fakeBackend('exec-server');
    const pick = picker(box);
    await pick.pick('box', WORKSPACE_WRITE);
    await pick.pick('box', WORKSPACE_WRITE);
    expect(box.probes).toBe(2);
  });
});
