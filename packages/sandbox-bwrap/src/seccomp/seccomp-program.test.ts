import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  SECCOMP_RET_ALLOW,
  SECCOMP_RET_ERRNO,
  SECCOMP_RET_KILL_PROCESS,
  SECCOMP_RET_USER_NOTIF,
} from './bpf-assembler.js';
import { buildSeccompProgram, compileSeccompRules, type SeccompNetwork } from './seccomp-program.js';
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

  it('with the network on, allows inet sockets and connections but not VM or unix sockets', () => {
    expect(decide(on, 'socket', [2, 1])).toBe(SECCOMP_RET_ALLOW);
    expect(decide(on, 'socket', [10, 2 /* UDP */])).toBe(SECCOMP_RET_ALLOW);
    expect(decide(on, 'connect', [3, 0, 16])).toBe(SECCOMP_RET_ALLOW);
    expect(decide(on, 'socket', [40 /* AF_VSOCK */, 1])).toBe(EPERM);
    expect(decide(on, 'socketpair', [40, 1])).toBe(EPERM);
    // The host's unix sockets (Docker, ssh-agent, abstract ones in the shared namespace): no socket().
    expect(decide(on, 'socket', [1, 1])).toBe(EPERM);
    expect(decide(on, 'socket', [1, 2 | 0x80000])).toBe(EPERM);
    // Pipes between sandboxed processes (and ZshFork's escalation pairs) keep working.
    expect(decide(on, 'socketpair', [1, 1])).toBe(SECCOMP_RET_ALLOW);
    expect(decide(on, 'socketpair', [1, 2])).toBe(SECCOMP_RET_ALLOW);
  });

  it('refuses x32 calls on x86_64', () => {
    if (arch === 'x64') expect(run(off, { nr: 0x40000000 | 1, arch: audit })).toBe(EPERM);
  });
});

const SOCK_NONBLOCK = 0x800;
const SOCK_CLOEXEC = 0x80000;
const AF = { UNIX: 1, INET: 2, INET6: 10, NETLINK: 16, PACKET: 17, VSOCK: 40 } as const;
const SOCK = { STREAM: 1, DGRAM: 2, RAW: 3, SEQPACKET: 5 } as const;

describe.each<SeccompArch>(['x64', 'arm64'])('seccomp program, proxied and supervised modes (%s)', (arch) => {
  const audit = SECCOMP_ARCHES[arch].audit;
  const nr = (name: string) => SYSCALLS[name]![arch]!;
  const program = (network: SeccompNetwork, superviseConnect = false) =>
    buildSeccompProgram(arch, network, { superviseConnect });
  const decide = (p: Uint8Array, name: string, args: number[] = []) =>
    run(p, { nr: nr(name), arch: audit, args });

  it('proxied: TCP sockets only (flags masked off), unix only as socketpairs, no datagrams to an address', () => {
    const proxied = program('proxied');
    for (const family of [AF.INET, AF.INET6]) {
      expect(decide(proxied, 'socket', [family, SOCK.STREAM])).toBe(SECCOMP_RET_ALLOW);
      expect(decide(proxied, 'socket', [family, SOCK.STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC])).toBe(
        SECCOMP_RET_ALLOW,
      );
      expect(decide(proxied, 'socket', [family, SOCK.DGRAM]), 'UDP').toBe(EPERM);
      expect(decide(proxied, 'socket', [family, SOCK.DGRAM | SOCK_CLOEXEC]), 'UDP').toBe(EPERM);
      expect(decide(proxied, 'socket', [family, SOCK.RAW]), 'raw').toBe(EPERM);
      // An unknown flag bit is not masked off: the type is not SOCK_STREAM any more.
      expect(decide(proxied, 'socket', [family, SOCK.STREAM | 0x100])).toBe(EPERM);
    }
    for (const family of [AF.UNIX, AF.NETLINK, AF.PACKET, AF.VSOCK, 0])
      expect(decide(proxied, 'socket', [family, SOCK.STREAM]), `family ${family}`).toBe(EPERM);
    expect(decide(proxied, 'socketpair', [AF.UNIX, SOCK.STREAM])).toBe(SECCOMP_RET_ALLOW);
    expect(decide(proxied, 'socketpair', [AF.UNIX, SOCK.DGRAM])).toBe(SECCOMP_RET_ALLOW);
    expect(decide(proxied, 'socketpair', [AF.INET, SOCK.STREAM])).toBe(EPERM);
    // Connecting to the bridge, and servers of the command's own on its loopback.
    for (const name of ['connect', 'bind', 'listen', 'accept4'])
      expect(decide(proxied, name), name).toBe(SECCOMP_RET_ALLOW);
    expect(decide(proxied, 'sendto', [3, 0, 10, 0, 0, 0])).toBe(SECCOMP_RET_ALLOW);
    expect(decide(proxied, 'sendto', [3, 0, 10, 0, 0x7ffd1000, 16])).toBe(EPERM);
    // The base rules still hold.
    expect(decide(proxied, 'ptrace')).toBe(EPERM);
    expect(decide(proxied, 'io_uring_setup')).toBe(EPERM);
  });

  it('supervised: connect goes to the listener in every mode, nothing else changes hands', () => {
    for (const network of ['restricted', 'enabled', 'proxied'] as const) {
      const supervised = program(network, true);
      expect(decide(supervised, 'connect', [3, 0, 110]), network).toBe(SECCOMP_RET_USER_NOTIF);
      expect(decide(supervised, 'ptrace'), network).toBe(EPERM);
      expect(decide(supervised, 'socketpair', [AF.UNIX, SOCK.DGRAM]), network).toBe(SECCOMP_RET_ALLOW);
      // AF_UNIX streams can be made (to connect through the supervisor), datagram sockets cannot.
      expect(decide(supervised, 'socket', [AF.UNIX, SOCK.STREAM | SOCK_CLOEXEC]), network).toBe(
        SECCOMP_RET_ALLOW,
      );
      expect(decide(supervised, 'socket', [AF.UNIX, SOCK.DGRAM]), network).toBe(EPERM);
      expect(decide(supervised, 'socket', [AF.VSOCK, SOCK.STREAM]), network).toBe(EPERM);
    }
    const restricted = program('restricted', true);
    // The kernel makes socket(AF_UNIX, SOCK_RAW) a datagram socket.
    expect(decide(restricted, 'socket', [AF.UNIX, SOCK.RAW])).toBe(EPERM);
    expect(decide(restricted, 'socket', [AF.UNIX, SOCK.SEQPACKET])).toBe(SECCOMP_RET_ALLOW);
    for (const name of ['bind', 'listen', 'accept', 'accept4'])
      expect(decide(restricted, name), name).toBe(EPERM);
    expect(decide(restricted, 'socket', [AF.INET, SOCK.STREAM])).toBe(EPERM);
    const enabled = program('enabled', true);
    expect(decide(enabled, 'socket', [AF.INET, SOCK.DGRAM])).toBe(SECCOMP_RET_ALLOW);
    expect(decide(enabled, 'socket', [AF.NETLINK, SOCK.RAW])).toBe(SECCOMP_RET_ALLOW);
    expect(decide(enabled, 'socket', [AF.UNIX, SOCK.SEQPACKET])).toBe(EPERM);
    const proxied = program('proxied', true);
    expect(decide(proxied, 'socket', [AF.INET6, SOCK.STREAM])).toBe(SECCOMP_RET_ALLOW);
    expect(decide(proxied, 'socket', [AF.INET, SOCK.DGRAM])).toBe(EPERM);
    expect(decide(proxied, 'socket', [AF.NETLINK, SOCK.RAW])).toBe(EPERM);
    expect(decide(proxied, 'sendto', [3, 0, 10, 0, 0x7ffd1000, 16])).toBe(EPERM);
  });

  it('refuses two rules for one syscall (the second would never be reached)', () => {
    expect(() =>
      compileSeccompRules(arch, [
        { syscall: 'ptrace', errno: 1, why: 'a' },
        { syscall: 'ptrace', errno: 13, why: 'b' },
      ]),
    ).toThrow(/two seccomp rules for ptrace/);
  });
});

// Goldens: the exact programs. A deliberate change of the rules updates these; an accidental one (an
// assembler or ordering change) fails here. The network-off program is the one before proxied mode
// and user notification existed, byte for byte.
describe('seccomp program goldens', () => {
  const digest = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex').slice(0, 16);
  it.each<[SeccompArch, SeccompNetwork, boolean, number, string]>([
    ['x64', 'restricted', false, 80, '105a7a380f97679d'],
    ['x64', 'restricted', true, 84, 'e29bc1a33c4fa412'],
    ['x64', 'enabled', false, 71, 'fa1faf9cdb61ab6f'],
    ['x64', 'enabled', true, 76, 'f9870c7692242c49'],
    ['x64', 'proxied', false, 76, '8e29866d1bc1bd13'],
    ['x64', 'proxied', true, 79, '7f4f92c8583987d6'],
    ['arm64', 'restricted', false, 76, '61ead6ea1fa01351'],
    ['arm64', 'restricted', true, 80, 'a9e89b997ef6660f'],
    ['arm64', 'enabled', false, 67, 'cb640e8b02602e5c'],
    ['arm64', 'enabled', true, 72, '1b9d55ecbb9f21ce'],
    ['arm64', 'proxied', false, 72, 'a5ebcc33b7f27830'],
    ['arm64', 'proxied', true, 75, 'fc0115a83d8c36a1'],
  ])('%s %s supervised=%s', (arch, network, superviseConnect, instructions, hash) => {
    const program = buildSeccompProgram(arch, network, { superviseConnect });
    expect([program.length / 8, digest(program)]).toEqual([instructions, hash]);
  });
});
