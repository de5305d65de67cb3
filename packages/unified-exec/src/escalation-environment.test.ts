import { describe, expect, it } from 'vitest';
import { escalationEnvironment } from './escalation-environment.js';

const SESSION = {
  HOME: '/home/me',
  PATH: '/usr/bin:/bin',
  GIT_PAGER: 'cat',
  LANG: 'C.UTF-8',
  TERM: 'dumb',
  NO_COLOR: '1',
};

describe('escalationEnvironment', () => {
  it('is the session’s environment: HOME, XDG_*, PATH, GIT_*, pagers and loaders the shell set are dropped (named, but PATH)', () => {
    const { env, dropped } = escalationEnvironment(
      {
        ...SESSION,
        HOME: '/w/fh',
        XDG_CONFIG_HOME: '/w/x',
        GIT_DIR: '/w/e.git',
        GIT_WORK_TREE: '/w',
        GIT_PAGER: 'evil-pager',
        PATH: '/w/evil-bin:/usr/bin',
        LD_PRELOAD: './evil.so',
        NODE_OPTIONS: '--require ./x.js',
        EDITOR: 'evil',
        MADE_UP: 'x',
      },
      SESSION,
      '/w/repo',
    );
    expect(env).toEqual({ ...SESSION, PWD: '/w/repo' });
    expect(dropped).toEqual([
      'HOME',
      'GIT_PAGER',
      'XDG_CONFIG_HOME',
      'GIT_DIR',
      'GIT_WORK_TREE',
      'LD_PRELOAD',
      'NODE_OPTIONS',
      'EDITOR',
      'MADE_UP',
    ]);
  });

  it('passes terminal and locale settings the shell changed, when their values name no file', () => {
    const { env, dropped } = escalationEnvironment(
      {
        ...SESSION,
        TERM: 'xterm-256color',
        COLUMNS: '120',
        LANG: 'de_DE.UTF-8',
        LC_MESSAGES: 'fr_FR.UTF-8',
        TZ: 'Europe/Paris',
        FORCE_COLOR: '1',
        LC_CTYPE: '/w/evil-locale',
        LINES: '24; rm',
        LANGUAGE: '../../w/x',
      },
      SESSION,
    );
    expect(env).toMatchObject({
      TERM: 'xterm-256color',
      COLUMNS: '120',
      LANG: 'de_DE.UTF-8',
      LC_MESSAGES: 'fr_FR.UTF-8',
      TZ: 'Europe/Paris',
      FORCE_COLOR: '1',
    });
    expect(env).not.toHaveProperty('LC_CTYPE');
    expect(env).not.toHaveProperty('LINES');
    expect(env).not.toHaveProperty('LANGUAGE');
    expect(dropped).toEqual(['LC_CTYPE', 'LINES', 'LANGUAGE']);
  });

  it('drops a zone file path in TZ', () => {
    for (const tz of ['/w/zone', ':/w/zone', 'Europe/../../w/zone']) {
      expect(escalationEnvironment({ TZ: tz }, {}).dropped).toEqual(['TZ']);
    }
    expect(escalationEnvironment({ TZ: 'EST5EDT,M3.2.0,M11.1.0' }, {}).env.TZ).toBe('EST5EDT,M3.2.0,M11.1.0');
  });

  it('keeps the session’s values of names the shell unset, and says nothing of the shell’s and ux’s bookkeeping', () => {
    const { env, dropped } = escalationEnvironment(
      {
        PWD: '/w',
        OLDPWD: '/',
        SHLVL: '2',
        _: '/usr/bin/git',
        UX_SANDBOX: 'bwrap',
        HTTP_PROXY: 'http://127.0.0.1:3128',
        TMPDIR: '/tmp',
      },
      { ...SESSION, PWD: '/elsewhere', OLDPWD: '/x' },
    );
    expect(env).toEqual(SESSION);
    expect(dropped).toEqual([]);
  });
});
