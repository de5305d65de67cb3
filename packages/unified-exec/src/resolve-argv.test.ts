import { describe, expect, it } from 'vitest';
import { resolveArgv } from './resolve-argv.js';

const direct = { kind: 'direct' } as const;
const base = { cmd: 'echo hi', userShell: '/bin/bash', allowLoginShell: true, shellMode: direct };

describe('resolveArgv', () => {
  it.each([
    [{}, ['/bin/bash', '-lc', 'echo hi']],
    [{ login: false }, ['/bin/bash', '-c', 'echo hi']],
    [{ shell: '/bin/zsh' }, ['/bin/zsh', '-lc', 'echo hi']],
    [{ shell: 'sh', login: false }, ['sh', '-c', 'echo hi']],
    [{ shell: '/usr/bin/pwsh' }, ['/usr/bin/pwsh', '-Command', 'echo hi']],
    [{ shell: 'powershell.exe', login: false }, ['powershell.exe', '-NoProfile', '-Command', 'echo hi']],
    [{ shell: 'C:\\Windows\\System32\\cmd.exe' }, ['C:\\Windows\\System32\\cmd.exe', '/c', 'echo hi']],
    [{ allowLoginShell: false }, ['/bin/bash', '-c', 'echo hi']],
  ])('%j → %j', (input, argv) => {
    expect(resolveArgv({ ...base, ...input })).toEqual({ ok: true, argv });
  });

  it('refuses login when config disallows login shells', () => {
    expect(resolveArgv({ ...base, allowLoginShell: false, login: true })).toEqual({
      ok: false,
      message: 'login shell is disabled by config; omit `login` or set it to false.',
    });
  });

  it('runs the configured zsh in zsh-fork mode and refuses a shell argument there', () => {
    const shellMode = { kind: 'zsh-fork', zshPath: '/opt/zsh/bin/zsh', execveWrapperPath: '/opt/w' } as const;
    expect(resolveArgv({ ...base, shellMode })).toEqual({
      ok: true,
      argv: ['/opt/zsh/bin/zsh', '-lc', 'echo hi'],
    });
    expect(resolveArgv({ ...base, shellMode, shell: '/bin/bash' })).toEqual({
      ok: false,
      message:
        '`shell` is not supported in zsh-fork mode: commands run through the configured zsh; omit `shell`.',
    });
  });

  it('refuses, with its size and the limit, a command Linux cannot pass to a shell (one argument)', () => {
    const cmd = `echo ${'x'.repeat(200_000)}`;
    const result = resolveArgv({ ...base, cmd }, 'linux');
    expect(result).toEqual({
      ok: false,
      message: expect.stringMatching(
        /^the command is 200005 bytes; the limit here is 131071 bytes \(Linux passes a command to its shell as one argument\)\. Write a long script to a file and run the file\. It begins: "echo x{75}"…$/,
      ),
    });
    expect(resolveArgv({ ...base, cmd: 'x'.repeat(131_071) }, 'linux').ok).toBe(true);
    expect(resolveArgv({ ...base, cmd }, 'darwin').ok).toBe(true);
  });
});
