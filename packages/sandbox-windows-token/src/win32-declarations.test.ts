import koffi from 'koffi';
import { describe, expect, it } from 'vitest';
import { JOB_PORT_FUNCTIONS } from './koffi-job-objects.js';
import { declareWin32Types, WIN32_FUNCTIONS } from './win32-declarations.js';

// koffi loads on Linux; declaring types and parsing prototypes needs no Windows DLL, so a typo in a
// prototype or a wrong structure layout fails here rather than on a user's machine.
describe('Win32 declarations for koffi', () => {
  declareWin32Types(koffi);

  it('parses every prototype, with the name it is looked up by', () => {
    for (const [name, [dll, prototype]] of Object.entries(WIN32_FUNCTIONS)) {
      expect(['advapi32.dll', 'kernel32.dll']).toContain(dll);
      expect(koffi.proto(prototype).name, prototype).toBe(name);
    }
  });

  // One test parses every prototype: koffi's registry is process-wide and refuses a name twice.
  it("parses the job objects' prototypes too, each kernel32's, and the same where both declare one", () => {
    for (const [name, [dll, prototype]] of Object.entries(JOB_PORT_FUNCTIONS)) {
      expect(dll).toBe('kernel32.dll');
      const shared = WIN32_FUNCTIONS[name as keyof typeof WIN32_FUNCTIONS];
      if (shared) expect(shared[1], name).toBe(prototype);
      else expect(koffi.proto(prototype).name, prototype).toBe(name);
    }
  });

  it('lays the structures out as on Win64', () => {
    const sizes: Record<string, number> = {
      SID_AND_ATTRIBUTES: 16,
      TRUSTEE_W: 32,
      EXPLICIT_ACCESS_W: 48,
      ACE_PREFIX: 8,
      ACL_SIZE_INFORMATION: 12,
      TOKEN_DEFAULT_DACL: 8,
      STARTUPINFOW: 104,
      STARTUPINFOEXW: 112,
      PROCESS_INFORMATION: 24,
      JOBOBJECT_BASIC_LIMIT_INFORMATION: 64,
      JOBOBJECT_EXTENDED_LIMIT_INFORMATION: 144,
    };
    for (const [name, size] of Object.entries(sizes)) expect(koffi.sizeof(name), name).toBe(size);
    expect(koffi.offsetof('STARTUPINFOW', 'hStdInput')).toBe(80);
    expect(koffi.offsetof('EXPLICIT_ACCESS_W', 'Trustee')).toBe(16);
    expect(koffi.offsetof('JOBOBJECT_BASIC_LIMIT_INFORMATION', 'LimitFlags')).toBe(16);
  });

  it('declares once per process', () => {
    expect(() => declareWin32Types(koffi)).not.toThrow();
  });
});
