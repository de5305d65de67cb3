import { describe, expect, it } from 'vitest';
import { classifyWindowsDenial } from './classify-windows-denial.js';

describe('classifyWindowsDenial', () => {
  it('recognises access denials in their Win32, .NET, PowerShell and Node spellings', () => {
    for (const output of [
      'Access is denied.',
      "Out-File : Access to the path 'C:\\w\\.git\\config' is denied.",
      'System.UnauthorizedAccessException: Access to the path is denied.',
      'error: could not lock config file .git/config: Permission denied (ERROR_ACCESS_DENIED)',
      'HRESULT: 0x80070005',
      "Error: EPERM: operation not permitted, open 'C:\\w\\.git\\hooks\\pre-commit'",
      "Error: EACCES: permission denied, open 'C:\\Windows\\x'",
      'An attempt was made to access a socket in a way forbidden by its access permissions.',
      'connect WSAEACCES 10.0.0.1:443',
      "Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server (proxy 127.0.0.1:9)",
      'ux-windows-token: CreateRestrictedToken failed with Win32 error 1314',
    ]) {
      expect(classifyWindowsDenial({ exitCode: 1, output }), output).toBe('denied');
    }
  });

  it('never calls exit 0 a denial, and leaves other failures to the generic heuristic', () => {
    expect(classifyWindowsDenial({ exitCode: 0, output: 'Access is denied.' })).toBe('not_denied');
    expect(
      classifyWindowsDenial({
        exitCode: 1,
        output: "'foo' is not recognized as an internal or external command",
      }),
    ).toBe('unknown');
    expect(classifyWindowsDenial({ exitCode: 2, output: '' })).toBe('unknown');
    expect(classifyWindowsDenial({ exitCode: 1, output: 'listening on 127.0.0.1:9000' })).toBe('unknown');
  });
});
