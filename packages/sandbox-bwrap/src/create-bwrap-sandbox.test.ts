import { describe, expect, it, onTestFinished } from 'vitest';
import { createBwrapSandbox } from './create-bwrap-sandbox.js';

// The fix text is read by people editing config.toml, so it names the config key (`[sandbox.bwrap] path`),
// not this package's setting (`bwrapPath`), which the config would reject as unknown.
describe.runIf(process.platform === 'linux')('createBwrapSandbox: a bwrap that cannot be found', () => {
  it('says to install bubblewrap or set [sandbox.bwrap] path when none is on PATH', async () => {
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    onTestFinished(() => {
      process.env.PATH = path;
    });
    const sandbox = createBwrapSandbox();
    onTestFinished(() => sandbox.close());
    expect(await sandbox.probe()).toEqual({
      available: false,
      reason: 'bubblewrap (bwrap) was not found on PATH (/nonexistent)',
      fix: 'install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap, pacman -S bubblewrap), or set [sandbox.bwrap] path in config.toml to the absolute path of bwrap',
    });
  });

  it('names [sandbox.bwrap] path when the configured path is not an executable', async () => {
    const sandbox = createBwrapSandbox({ bwrapPath: '/no/such/bwrap' });
    onTestFinished(() => sandbox.close());
    expect(await sandbox.probe()).toEqual({
      available: false,
      reason: '[sandbox.bwrap] path /no/such/bwrap is not an executable file',
      fix: 'set [sandbox.bwrap] path in config.toml to the absolute path of an installed bwrap (command -v bwrap), or remove it to use the one on PATH',
    });
  });
});
