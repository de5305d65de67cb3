import { describe, expect, it } from 'vitest';
import { classifySeatbeltDenial } from './classify-seatbelt-denial.js';

describe('classifySeatbeltDenial', () => {
  it('recognises what macOS prints when Seatbelt blocks something', () => {
    for (const output of [
      'cat: /Users/me/.ssh/id_rsa: Operation not permitted',
      '/bin/bash: .bashrc: Operation not permitted',
      "Error: EPERM: operation not permitted, open '/Users/me/x'",
      'PermissionError: [Errno 1] Operation not permitted',
      'sandbox-exec: sandbox_apply: Operation not permitted',
      'sandbox-exec: unbound variable WRITABLE_ROOT_0',
      'Sandbox: touch(4242) deny(1) file-write-create /Users/me/outside',
    ]) {
      expect(classifySeatbeltDenial({ exitCode: 1, output }), output).toBe('denied');
    }
  });

  it('never calls exit 0 a denial, and leaves unfamiliar failures to the generic heuristic', () => {
    expect(classifySeatbeltDenial({ exitCode: 0, output: 'Operation not permitted' })).toBe('not_denied');
    expect(classifySeatbeltDenial({ exitCode: 1, output: 'touch: x: Read-only file system' })).toBe(
      'unknown',
    );
    expect(classifySeatbeltDenial({ exitCode: 2, output: 'make: *** [test] Error 2' })).toBe('unknown');
    expect(classifySeatbeltDenial({ exitCode: 126, output: 'permission denied: ./run.sh' })).toBe('unknown');
  });
});
