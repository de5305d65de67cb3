import { describe, expect, it } from 'vitest';
import {
  decodeLaunchSpec,
  encodeLaunchSpec,
  parseLauncherArguments,
  type WindowsTokenLaunchSpec,
} from './launch-spec.js';

const spec: WindowsTokenLaunchSpec = {
  version: 1,
  sandboxId: 'default',
  capabilitySid: 'S-1-15-3-1024-1-2-3-4-5-6-7-8',
  token: { flags: 13, restrictingSids: ['S-1-15-3-1024-1-2-3-4-5-6-7-8', '<run>', '<logon>', 'S-1-1-0'] },
  aces: [
    {
      path: 'C:\\w\\ü',
      trustee: 'capability',
      type: 'allow',
      mask: 0x1301ff,
      flags: 3,
      undo: 'never',
      why: 'writable root',
    },
  ],
  tty: false,
};

describe('launch spec', () => {
  it('round-trips through one argv element without quotes or spaces', () => {
    const text = encodeLaunchSpec(spec);
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeLaunchSpec(text)).toEqual(spec);
  });

  it('parses the launcher arguments', () => {
    expect(parseLauncherArguments(['--plan', encodeLaunchSpec(spec), '--', 'cmd.exe', '/c', 'dir'])).toEqual({
      spec,
      argv: ['cmd.exe', '/c', 'dir'],
    });
  });

  it('rejects malformed input with a reason', () => {
    expect(() => parseLauncherArguments(['cmd.exe'])).toThrow(/usage/);
    expect(() => parseLauncherArguments(['--plan', encodeLaunchSpec(spec), '--'])).toThrow(/no command/);
    expect(() => decodeLaunchSpec('!!!')).toThrow(/not base64url JSON/);
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    expect(() => decodeLaunchSpec(encode({ ...spec, version: 2 }))).toThrow(/unsupported plan version 2/);
    expect(() => decodeLaunchSpec(encode({ ...spec, capabilitySid: 'S-1-1-0' }))).toThrow(/capability SID/);
    expect(() =>
      decodeLaunchSpec(encode({ ...spec, aces: [{ ...spec.aces[0], trustee: 'everyone' }] })),
    ).toThrow(/malformed ACE/);
  });
});
