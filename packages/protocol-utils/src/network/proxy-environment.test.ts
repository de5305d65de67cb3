import { UxError } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { proxyEnvironment } from './proxy-environment.js';

describe('proxyEnvironment', () => {
  it('sets sandbox-runtime’s variables for Linux, pointing at 127.0.0.1', () => {
    expect(proxyEnvironment({ httpPort: 3128, socksPort: 1080, platform: 'linux' })).toEqual({
      NO_PROXY: 'localhost,127.0.0.1,::1',
      no_proxy: 'localhost,127.0.0.1,::1',
      HTTP_PROXY: 'http://127.0.0.1:3128',
      HTTPS_PROXY: 'http://127.0.0.1:3128',
      http_proxy: 'http://127.0.0.1:3128',
      https_proxy: 'http://127.0.0.1:3128',
      ALL_PROXY: 'socks5h://127.0.0.1:1080',
      all_proxy: 'socks5h://127.0.0.1:1080',
      FTP_PROXY: 'socks5h://127.0.0.1:1080',
      GRPC_PROXY: 'socks5h://127.0.0.1:1080',
      RSYNC_PROXY: '127.0.0.1:3128',
      DOCKER_HTTP_PROXY: 'http://127.0.0.1:3128',
      DOCKER_HTTPS_PROXY: 'http://127.0.0.1:3128',
      CLOUDSDK_PROXY_TYPE: 'http',
      CLOUDSDK_PROXY_ADDRESS: '127.0.0.1',
      CLOUDSDK_PROXY_PORT: '3128',
      NODE_USE_ENV_PROXY: '1',
    });
  });

  it('adds GIT_SSH_COMMAND through BSD nc on macOS only', () => {
    const mac = proxyEnvironment({ httpPort: 3128, socksPort: 1080, platform: 'darwin' });
    expect(mac.GIT_SSH_COMMAND).toBe("ssh -o ProxyCommand='nc -X 5 -x 127.0.0.1:1080 %h %p'");
    expect(Object.keys(mac)).toHaveLength(18);
    expect(proxyEnvironment({ httpPort: 3128, platform: 'linux' }).GIT_SSH_COMMAND).toBeUndefined();
  });

  it('uses the HTTP port for SOCKS when one listener serves both', () => {
    const environment = proxyEnvironment({ httpPort: 40001, platform: 'linux' });
    expect(environment.ALL_PROXY).toBe('socks5h://127.0.0.1:40001');
    expect(environment.HTTPS_PROXY).toBe('http://127.0.0.1:40001');
  });

  it('refuses a port that is not one', () => {
    for (const httpPort of [0, 65536, 1.5, Number.NaN]) {
      expect(() => proxyEnvironment({ httpPort })).toThrow(UxError);
    }
    expect(() => proxyEnvironment({ httpPort: 1, socksPort: -1 })).toThrow('socksPort must be a port number');
  });
});
