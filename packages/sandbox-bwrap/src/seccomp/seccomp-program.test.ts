import { describe, expect, it } from 'vitest';
import { SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO, SECCOMP_RET_KILL_PROCESS } from './bpf-assembler.js';
import { buildSeccompProgram } from './seccomp-program.js';
import { SECCOMP_ARCHES, type SeccompArch, SYSCALLS } from './syscalls.js';

/** A classic-BPF interpreter for the opcodes the generator emits, to check what a program decides. */
function run(program: Uint8Array, data: { nr: number; arch: number; args?: number[] }): number {
  const word = (offset: number) => {
    if (offset === 0) return data.nr >>> 0;
    if (offset === 4) return data.arch >>> 0;
    const index = (offset - 16) / 8;
    if (!Number.isInteger(index) || index < 0 || index > 5) throw new Error(`load at ${offset}`);
    return (data.args?.[index] ?? 0) >>> 0;
  };
  const view = Buffer.from(program);
  let a = 0;
  for (let pc = 0; pc < view.length / 8; ) {
    const code = view.readUInt16LE(pc * 8);
    const jt = view.readUInt8(pc * 8 + 2);
    const jf = view.readUInt8(pc * 8 + 3);
    const k = view.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) a = word(k);
    else if (code === 0x54) a = (a & k) >>> 0;
    else if (code === 0x06) return k;
    else if (code === 0x15) {
      pc += 1 + (a === k ? jt : jf);
      continue;
    } else if (code === 0x45) {
      pc += 1 + ((a & k) !== 0 ? jt : jf);
      continue;
    } else throw new Error(`opcode ${code}`);
    pc++;
  }
  throw new Error('fell off the end');
}

const EPERM = SECCOMP_RET_ERRNO | 1;

describe.each<SeccompArch>(['x64', 'arm64'])('seccomp program (%s)', (arch) => {
  const audit = SECCOMP_ARCHES[arch].audit;
  const nr = (name: string) => SYSCALLS[name]![arch]!;
  const off = buildSeccompProgram(arch, 'restricted');
  const on = buildSeccompProgram(arch, 'enabled');
  const decide = (program: Uint8Array, name: string, args: number[] = []) =>
    run(program, { nr: nr(name), arch: audit, args });

  it('kills calls from another architecture and allows ordinary calls', () => {
    expect(run(off, { nr: 0, arch: 0x40000003 })).toBe(SECCOMP_RET_KILL_PROCESS);
    expect(run(off, { nr: 0, arch: audit })).toBe(SECCOMP_RET_ALLOW);
    expect(decide(off, 'fchmod', [3, 0o755])).toBe(SECCOMP_RET_ALLOW);
  });

  it('refuses io_uring, ptrace, mounts, namespaces and handles in both modes', () => {
    for (const program of [off, on]) {
      for (const name of [
        'io_uring_setup',
        'io_uring_enter',
        'ptrace',
        'process_vm_readv',
        'mount',
        'umount2',
        'unshare',
        'setns',
        'open_by_handle_at',
        'bpf',
        'keyctl',
      ]) {
        expect(decide(program, name), name).toBe(EPERM);
      }
      expect(decide(program, 'clone3')).toBe(SECCOMP_RET_ERRNO | 38);
      expect(decide(program, 'clone', [0x10000000 /* CLONE_NEWUSER */])).toBe(EPERM);
      expect(decide(program, 'clone', [0x01200011 /* fork-like flags */])).toBe(SECCOMP_RET_ALLOW);
    }
  });

  it('refuses terminal input injection but not other ioctls', () => {
    expect(decide(off, 'ioctl', [0, 0x5412])).toBe(EPERM);
    expect(decide(off, 'ioctl', [0, 0x541c])).toBe(EPERM);
    expect(decide(off, 'ioctl', [0, 0x5401 /* TCGETS */])).toBe(SECCOMP_RET_ALLOW);
  });

  it('refuses set-id bits in every chmod variant', () => {
    expect(decide(on, 'fchmod', [3, 0o4755])).toBe(EPERM);
    expect(decide(on, 'fchmodat', [-100, 0, 0o2755])).toBe(EPERM);
    expect(decide(on, 'fchmodat2', [-100, 0, 0o6755, 0])).toBe(EPERM);
    expect(decide(on, 'fchmodat', [-100, 0, 0o1777])).toBe(SECCOMP_RET_ALLOW);
    if (arch === 'x64') expect(decide(on, 'chmod', [0, 0o4755])).toBe(EPERM);
  });

  it('with the network off, allows only AF_UNIX streams and socketpairs, and no connections', () => {
    expect(decide(off, 'socket', [2 /* AF_INET */, 1])).toBe(EPERM);
    expect(decide(off, 'socket', [10 /* AF_INET6 */, 2])).toBe(EPERM);
    expect(decide(off, 'socket', [16 /* AF_NETLINK */, 3])).toBe(EPERM);
    expect(decide(off, 'socket', [1, 1 /* SOCK_STREAM */])).toBe(SECCOMP_RET_ALLOW);
    expect(decide(off, 'socket', [1, 1 | 0x80000 /* SOCK_CLOEXEC */])).toBe(SECCOMP_RET_ALLOW);
    expect(decide(off, 'socket', [1, 2 /* SOCK_DGRAM */])).toBe(EPERM);
    expect(decide(off, 'socketpair', [1, 2])).toBe(SECCOMP_RET_ALLOW);
    expect(decide(off, 'socketpair', [2, 1])).toBe(EPERM);
    for (const name of ['connect', 'bind', 'listen', 'accept', 'accept4'])
      expect(decide(off, name), name).toBe(EPERM);
    expect(decide(off, 'sendto', [3, 0, 10, 0, 0, 0])).toBe(SECCOMP_RET_ALLOW);
    expect(decide(off, 'sendto', [3, 0, 10, 0, 0x7ffd1000, 16])).toBe(EPERM);
  });

  it('with the network on, allows inet sockets and connections but not VM sockets', () => {
    expect(decide(on, 'socket', [2, 1])).toBe(SECCOMP_RET_ALLOW);
    expect(decide(on, 'connect', [3, 0, 16])).toBe(SECCOMP_RET_ALLOW);
    expect(decide(on, 'socket', [40 /* AF_VSOCK */, 1])).toBe(EPERM);
  });

  it('refuses x32 calls on x86_64', () => {
    if (arch === 'x64') expect(run(off, { nr: 0x40000000 | 1, arch: audit })).toBe(EPERM);
  });
});
