import {
  assemble,
  DATA,
  type Instruction,
  SECCOMP_RET_ALLOW,
  SECCOMP_RET_ERRNO,
  SECCOMP_RET_KILL_PROCESS,
} from './bpf-assembler.js';
import {
  AF_UNIX,
  AF_VSOCK,
  CLONE_NEW_MASK,
  ENOSYS,
  EPERM,
  SECCOMP_ARCHES,
  SETID_BITS,
  type SeccompArch,
  SOCK_DGRAM,
  SYSCALLS,
  TIOCLINUX,
  TIOCSTI,
} from './syscalls.js';

/** When a rule refuses a call: always, or when one of its conditions on the arguments holds. */
export type Condition =
  | { arg: number; notEqual: number }
  | { arg: number; equal: number }
  | { arg: number; anyBits: number }
  | { arg: number; mask: number; maskedEqual: number };

export interface SeccompRule {
  syscall: string;
  errno: number;
  /** Refuse when any condition holds; no conditions means always. Only the low 32 bits are compared. */
  when?: Condition[];
  why: string;
}

/**
 * What every sandboxed command is refused, whatever the network: calls that reach around the mount
 * tree or other processes (io_uring, ptrace, process_vm_*, handles by inode, module and kexec loading,
 * new mounts and namespaces, bpf, perf, userfaultfd, keyrings), terminal input injection (TIOCSTI,
 * TIOCLINUX), and set-id bits, which a sandboxed root could otherwise leave on a file the host runs.
 */
export const BASE_RULES: SeccompRule[] = [
  ...['io_uring_setup', 'io_uring_enter', 'io_uring_register'].map((syscall) => ({
    syscall,
    errno: EPERM,
    why: 'io_uring can perform calls this filter never sees (IORING_OP_SOCKET, …)',
  })),
  ...['ptrace', 'process_vm_readv', 'process_vm_writev'].map((syscall) => ({
    syscall,
    errno: EPERM,
    why: 'reading or steering another process',
  })),
  ...['open_by_handle_at', 'name_to_handle_at'].map((syscall) => ({
    syscall,
    errno: EPERM,
    why: 'opening files by handle bypasses the mount tree',
  })),
  ...[
    'mount',
    'umount2',
    'pivot_root',
    'open_tree',
    'move_mount',
    'fsopen',
    'fsconfig',
    'fsmount',
    'fspick',
    'mount_setattr',
  ].map((syscall) => ({ syscall, errno: EPERM, why: 'changing the mount tree' })),
  ...['unshare', 'setns'].map((syscall) => ({ syscall, errno: EPERM, why: 'new or foreign namespaces' })),
  { syscall: 'clone', errno: EPERM, when: [{ arg: 0, anyBits: CLONE_NEW_MASK }], why: 'new namespaces' },
  // clone3 passes its flags in memory the filter cannot read; ENOSYS makes libc fall back to clone.
  { syscall: 'clone3', errno: ENOSYS, why: 'flags out of the filter’s reach; libc falls back to clone' },
  ...[
    'init_module',
    'finit_module',
    'delete_module',
    'kexec_load',
    'kexec_file_load',
    'reboot',
    'swapon',
    'swapoff',
  ].map((syscall) => ({ syscall, errno: EPERM, why: 'kernel and machine control' })),
  ...['bpf', 'perf_event_open', 'userfaultfd', 'keyctl', 'add_key', 'request_key'].map((syscall) => ({
    syscall,
    errno: EPERM,
    why: 'kernel attack surface a command does not need',
  })),
  {
    syscall: 'ioctl',
    errno: EPERM,
    when: [
      { arg: 1, equal: TIOCSTI },
      { arg: 1, equal: TIOCLINUX },
    ],
    why: 'injecting input into a terminal',
  },
  { syscall: 'chmod', errno: EPERM, when: [{ arg: 1, anyBits: SETID_BITS }], why: 'set-id bits' },
  { syscall: 'fchmod', errno: EPERM, when: [{ arg: 1, anyBits: SETID_BITS }], why: 'set-id bits' },
  { syscall: 'fchmodat', errno: EPERM, when: [{ arg: 2, anyBits: SETID_BITS }], why: 'set-id bits' },
  { syscall: 'fchmodat2', errno: EPERM, when: [{ arg: 2, anyBits: SETID_BITS }], why: 'set-id bits' },
];

/**
 * With the network off: no sockets but AF_UNIX streams (and AF_UNIX socketpairs), no connect, bind,
 * listen or accept, and no datagrams to an address. Local pipes between sandboxed processes keep
 * working; nothing reaches a socket outside, unix sockets on the host included.
 */
export const NETWORK_OFF_RULES: SeccompRule[] = [
  {
    syscall: 'socket',
    errno: EPERM,
    when: [
      { arg: 0, notEqual: AF_UNIX },
      { arg: 1, mask: 0xf, maskedEqual: SOCK_DGRAM },
    ],
    why: 'only AF_UNIX stream sockets',
  },
  {
    syscall: 'socketpair',
    errno: EPERM,
    when: [{ arg: 0, notEqual: AF_UNIX }],
    why: 'only AF_UNIX socketpairs',
  },
  ...['connect', 'bind', 'listen', 'accept', 'accept4'].map((syscall) => ({
    syscall,
    errno: EPERM,
    why: 'no connections in or out',
  })),
  { syscall: 'sendto', errno: EPERM, when: [{ arg: 4, notEqual: 0 }], why: 'no datagrams to an address' },
];

/** With the network on: still no VM sockets, which reach host services (WSL interop, hypervisors). */
export const NETWORK_ON_RULES: SeccompRule[] = [
  { syscall: 'socket', errno: EPERM, when: [{ arg: 0, equal: AF_VSOCK }], why: 'AF_VSOCK reaches the host' },
  {
    syscall: 'socketpair',
    errno: EPERM,
    when: [{ arg: 0, equal: AF_VSOCK }],
    why: 'AF_VSOCK reaches the host',
  },
];

export function seccompRules(network: 'restricted' | 'enabled'): SeccompRule[] {
  return [...BASE_RULES, ...(network === 'restricted' ? NETWORK_OFF_RULES : NETWORK_ON_RULES)];
}

/**
 * The filter program bwrap loads with `--seccomp`: a foreign architecture is killed, x32 calls are
 * refused, each rule's syscall is refused with its errno (when its conditions hold), the rest allowed.
 */
export function buildSeccompProgram(arch: SeccompArch, network: 'restricted' | 'enabled'): Uint8Array {
  const rules = seccompRules(network).filter((rule) => SYSCALLS[rule.syscall]?.[arch] !== undefined);
  const { audit, x32Bit } = SECCOMP_ARCHES[arch];
  const program: Instruction[] = [
    { op: 'ld', offset: DATA.arch },
    { op: 'jeq', k: audit, yes: 'arch-ok', no: 'kill' },
    { op: 'label', name: 'arch-ok' },
    { op: 'ld', offset: DATA.nr },
  ];
  if (x32Bit) {
    program.push({ op: 'jset', k: x32Bit, yes: `errno-${EPERM}`, no: 'rule-0' });
  }
  const checks: Instruction[] = [];
  const errnos = new Set<number>([EPERM]);
  rules.forEach((rule, index) => {
    errnos.add(rule.errno);
    const next = index + 1 < rules.length ? `rule-${index + 1}` : 'allow';
    program.push({ op: 'label', name: `rule-${index}` });
    if (!rule.when) {
      program.push({ op: 'jeq', k: SYSCALLS[rule.syscall]![arch]!, yes: `errno-${rule.errno}`, no: next });
      return;
    }
    program.push({ op: 'jeq', k: SYSCALLS[rule.syscall]![arch]!, yes: `check-${index}-0`, no: next });
    rule.when.forEach((condition, c) => {
      const deny = `errno-${rule.errno}`;
      const more = c + 1 < rule.when!.length ? `check-${index}-${c + 1}` : 'allow';
      checks.push(
        { op: 'label', name: `check-${index}-${c}` },
        { op: 'ld', offset: DATA.argLow(condition.arg) },
      );
      if ('notEqual' in condition) checks.push({ op: 'jeq', k: condition.notEqual, yes: more, no: deny });
      else if ('equal' in condition) checks.push({ op: 'jeq', k: condition.equal, yes: deny, no: more });
      else if ('anyBits' in condition) checks.push({ op: 'jset', k: condition.anyBits, yes: deny, no: more });
      else
        checks.push(
          { op: 'and', k: condition.mask },
          { op: 'jeq', k: condition.maskedEqual, yes: deny, no: more },
        );
    });
  });
  // Classic BPF jumps only forward: argument checks first, then every return.
  program.push(...checks);
  program.push({ op: 'label', name: 'allow' }, { op: 'ret', k: SECCOMP_RET_ALLOW });
  program.push({ op: 'label', name: 'kill' }, { op: 'ret', k: SECCOMP_RET_KILL_PROCESS });
  for (const errno of errnos)
    program.push({ op: 'label', name: `errno-${errno}` }, { op: 'ret', k: SECCOMP_RET_ERRNO | errno });
  return assemble(program);
}

/** The architecture of this Node process, when the filter supports it. */
export function hostSeccompArch(): SeccompArch | undefined {
  if (process.arch === 'x64') return 'x64';
  if (process.arch === 'arm64') return 'arm64';
  return undefined;
}
