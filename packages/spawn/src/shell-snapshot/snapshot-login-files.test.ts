import { describe, expect, it } from 'vitest';
import { snapshotLoginFiles } from './snapshot-login-files.js';

describe('snapshotLoginFiles', () => {
  it('lists what bash reads as a login shell, under the given HOME', () => {
    const files = snapshotLoginFiles('bash', { HOME: '/home/me', BASH_ENV: '/etc/bash_env' });
    expect(files.slice(0, 7)).toEqual([
      '/home/me/.bash_profile',
      '/home/me/.bash_login',
      '/home/me/.profile',
      '/home/me/.bashrc',
      '/etc/profile',
      '/etc/bash.bashrc',
      '/etc/bash_env',
    ]);
    expect(files).toContain('/etc/profile.d');
  });

  it('uses $ZDOTDIR for zsh and lists both /etc layouts', () => {
    const files = snapshotLoginFiles('zsh', { HOME: '/home/me', ZDOTDIR: '/home/me/.config/zsh' });
    expect(files).toEqual(
      expect.arrayContaining([
        '/home/me/.config/zsh/.zshenv',
        '/home/me/.config/zsh/.zprofile',
        '/home/me/.config/zsh/.zshrc',
        '/home/me/.config/zsh/.zlogin',
        '/etc/zsh/zshenv',
        '/etc/zshenv',
        '/etc/zsh/zprofile',
      ]),
    );
    expect(files).not.toContain('/home/me/.zshrc');
  });

  it('reads ~/.profile, /etc/profile and an absolute $ENV for sh; a relative $ENV has no fixed place', () => {
    expect(snapshotLoginFiles('sh', { HOME: '/h', ENV: '~/.shrc' }).slice(0, 3)).toEqual([
      '/h/.profile',
      '/etc/profile',
      '/h/.shrc',
    ]);
    expect(snapshotLoginFiles('sh', { HOME: '/h', ENV: 'shrc' })).not.toContain('/h/shrc');
  });
});
