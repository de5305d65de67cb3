import { describe, expect, it } from 'vitest';
import { escalationEnvironment } from './escalation-environment.js';

describe('escalationEnvironment', () => {
  it('drops what would run code of the sandboxed side, keeps the rest and the door’s own values', () => {
    const { env, dropped } = escalationEnvironment(
      {
        HOME: '/home/me',
        LANG: 'C.UTF-8',
        LD_PRELOAD: './evil.so',
        DYLD_INSERT_LIBRARIES: 'x',
        BASH_ENV: './x.sh',
        NODE_OPTIONS: '--require ./x.js',
        GIT_SSH_COMMAND: 'evil',
        GIT_CONFIG_COUNT: '1',
        GIT_PAGER: 'evil-pager',
        PATH: '/w/evil-bin:/usr/bin',
        UX_SANDBOX: 'bwrap',
      },
      { PATH: '/usr/bin:/bin', GIT_PAGER: 'cat' },
    );
    expect(env).toEqual({ HOME: '/home/me', LANG: 'C.UTF-8', GIT_PAGER: 'cat', PATH: '/usr/bin:/bin' });
    expect(dropped).toEqual([
      'LD_PRELOAD',
      'DYLD_INSERT_LIBRARIES',
      'BASH_ENV',
      'NODE_OPTIONS',
      'GIT_SSH_COMMAND',
      'GIT_CONFIG_COUNT',
    ]);
  });

  it('leaves PATH out when the door gave none', () => {
    expect(escalationEnvironment({ PATH: '/w/bin' }, {}).env).toEqual({});
  });
});
