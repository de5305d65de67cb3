import { describe, expect, it } from 'vitest';
import { windowsSandboxEnv } from './windows-sandbox-env.js';

describe('windowsSandboxEnv', () => {
  it('adds the marker, non-interactive pagers and the advisory network settings, changing nothing', () => {
    const request = { Path: 'C:\\Windows', EMPTY: '' };
    const { env, added, kept } = windowsSandboxEnv(request, 'restricted');
    expect(env).toMatchObject(request);
    expect(added).toMatchObject({
      UX_SANDBOX: 'windows-token',
      PAGER: 'more.com',
      HTTP_PROXY: 'http://127.0.0.1:9',
      HTTPS_PROXY: 'http://127.0.0.1:9',
      NPM_CONFIG_OFFLINE: 'true',
      UX_SANDBOX_NETWORK_DISABLED: '1',
    });
    expect(kept).toEqual([]);
    expect(request).toEqual({ Path: 'C:\\Windows', EMPTY: '' });
  });

  it('treats names case-insensitively and keeps what is already set', () => {
    const { env, added, kept } = windowsSandboxEnv(
      { http_proxy: 'http://corp:3128', NO_PROXY: 'localhost,127.0.0.1,::1' },
      'restricted',
    );
    expect(env.http_proxy).toBe('http://corp:3128');
    expect('HTTP_PROXY' in env).toBe(false);
    expect('NO_PROXY' in added).toBe(false);
    expect(kept).toEqual(['http_proxy']);
  });

  it('adds no network settings when the network is on', () => {
    const { added } = windowsSandboxEnv({}, 'enabled');
    expect(Object.keys(added)).toEqual(['UX_SANDBOX', 'GIT_PAGER', 'PAGER']);
  });
});
