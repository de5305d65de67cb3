import {
  assemble,
  DATA,
  type Instruction,
  SECCOMP_RET_ALLOW,
  SECCOMP_RET_ERRNO,
  SECCOMP_RET_KILL_PROCESS,
  SECCOMP_RET_USER_NOTIF,
} from './bpf-assembler.js';
import {
  AF_INET,
  AF_INET6,
  AF_UNIX,
  AF_VSOCK,
  CLONE_NEW_MASK,
  ENOSYS,
  EPERM,
  SECCOMP_ARCHES,
  SETID_BITS,
  type SeccompArch,
  SOCK_DGRAM,
  SOCK_RAW,
  SOCK_STREAM,
  SOCK_TYPE_MASK,
  SYSCALLS,
  TIOCLINUX,
  TIOCSTI,
} from './syscalls.js';

/** A test on the low 32 bits of one argument, or several that must all hold. */
export type Condition =
  | { arg: number; notEqual: number }
  | { arg: number; equal: number }
  | { arg: number; anyBits: number }
  | { arg: number; mask: number; maskedEqual: number }
  | { arg: number; mask: number; maskedNotEqual: number }
  | { arg: number; notIn: readonly number[] }
  | { allOf: readonly Condition[] };

interface RuleBase {
  syscall: string;
  /** Applies when any condition holds; no conditions means always. Only the low 32 bits are compared. */
  when?: Condition[];
  why: string;
}

/**
 * What happens to a call: refused with `errno`, or (`notify`) handed to the filter's listener, the
 * connect supervisor of `ux-sandbox-exec`, which answers for the kernel (seccomp user notification).
 */
export type SeccompRule = RuleBase &
  ({ errno: number; notify?: undefined } | { notify: true; errno?: undefined });

/** The network modes a filter is generated for (the policy's `network`). */
export type SeccompNetwork = 'restricted' | 'enabled' | 'proxied';

export interface SeccompProgramOptions {
  /**
   * `connect` goes to the listener (SECCOMP_RET_USER_NOTIF) instead of the mode's own rule, and AF_UNIX
   * stream sockets may be created: the policy lists unix sockets (`allowUnixSockets`) the supervisor
   * connects to. Only for `ux-sandbox-exec --allow-unix`, which installs the filter with a listener.
   */
  superviseConnect?: boolean;
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

/**
 * With the network on: no VM sockets, which reach host services (WSL interop, hypervisors), and no
 * `socket(AF_UNIX, …)`: the host's unix sockets (Docker, ssh-agent, tmux, D-Bus, abstract ones in the
 * shared network namespace) stay out of reach. `socketpair(AF_UNIX)` stays allowed (pipes between
 * sandboxed processes).
 */
export const NETWORK_ON_RULES: SeccompRule[] = [
  {
    syscall: 'socket',
    errno: EPERM,
    when: [
      { arg: 0, equal: AF_UNIX },
      { arg: 0, equal: AF_VSOCK },
    ],
    why: 'AF_UNIX reaches the host’s unix sockets, AF_VSOCK the host itself',
  },
  {
    syscall: 'socketpair',
    errno: EPERM,
    when: [{ arg: 0, equal: AF_VSOCK }],
    why: 'AF_VSOCK reaches the host',
  },
];

/**
 * Through the host's proxy: TCP only (AF_INET and AF_INET6 stream sockets, to reach the bridge on the
 * namespace's loopback), unix sockets only as socketpairs: no UDP (so no DNS), raw, packet, netlink or
 * VM sockets, and no datagrams to an address.
 */
export const NETWORK_PROXIED_RULES: SeccompRule[] = [
  {
    syscall: 'socket',
    errno: EPERM,
    when: [
      { arg: 0, notIn: [AF_INET, AF_INET6] },
      { arg: 1, mask: SOCK_TYPE_MASK, maskedNotEqual: SOCK_STREAM },
    ],
    why: 'only TCP sockets (the proxy bridge is on loopback)',
  },
  {
    syscall: 'socketpair',
    errno: EPERM,
    when: [{ arg: 0, notEqual: AF_UNIX }],
    why: 'only AF_UNIX socketpairs',
  },
  { syscall: 'sendto', errno: EPERM, when: [{ arg: 4, notEqual: 0 }], why: 'no datagrams to an address' },
];

const SUPERVISED_CONNECT: SeccompRule = {
  syscall: 'connect',
  notify: true,
  why: 'the supervisor connects to listed unix sockets (and IP where the mode allows it) and refuses the rest',
};

/** The mode's rules with `connect` handed to the supervisor and AF_UNIX stream sockets allowed. */
function supervised(network: SeccompNetwork): SeccompRule[] {
  const unixStream: Condition = { arg: 1, mask: SOCK_TYPE_MASK, maskedNotEqual: SOCK_STREAM };
  if (network === 'restricted')
    return NETWORK_OFF_RULES.map((rule) => {
      if (rule.syscall === 'connect') return SUPERVISED_CONNECT;
      // socket(AF_UNIX, SOCK_RAW) makes a datagram socket: refused too, now that connect can succeed.
      if (rule.syscall === 'socket')
        return { ...rule, when: [...(rule.when ?? []), { arg: 1, mask: 0xf, maskedEqual: SOCK_RAW }] };
      return rule;
    });
  if (network === 'enabled')
    return [
      {
        syscall: 'socket',
        errno: EPERM,
        when: [{ arg: 0, equal: AF_VSOCK }, { allOf: [{ arg: 0, equal: AF_UNIX }, unixStream] }],
        why: 'AF_VSOCK reaches the host; AF_UNIX only as streams, whose connect is supervised',
      },
      ...NETWORK_ON_RULES.filter((rule) => rule.syscall !== 'socket'),
      SUPERVISED_CONNECT,
    ];
  return [
    {
      syscall: 'socket',
      errno: EPERM,
      when: [{ arg: 0, notIn: [AF_UNIX, AF_INET, AF_INET6] }, unixStream],
      why: 'only TCP and AF_UNIX stream sockets, whose connect is supervised',
    },
    ...NETWORK_PROXIED_RULES.filter((rule) => rule.syscall !== 'socket'),
    SUPERVISED_CONNECT,
  ];
}

export function seccompRules(network: SeccompNetwork, options: SeccompProgramOptions = {}): SeccompRule[] {
  if (options.superviseConnect) return [...BASE_RULES, ...supervised(network)];
  const rules =
    network === 'restricted'
      ? NETWORK_OFF_RULES
      : network === 'enabled'
        ? NETWORK_ON_RULES
        : NETWORK_PROXIED_RULES;
  return [...BASE_RULES, ...rules];
}

/**
 * The filter program (loaded by bwrap with `--seccomp`, or by `ux-sandbox-exec --seccomp-fd` when a
 * helper must keep what the command loses): a foreign architecture is killed (so 32-bit `socketcall`
 * never reaches the rules), x32 calls are refused, each rule's syscall is refused with its errno or
 * handed to the listener (when its conditions hold), the rest allowed.
 */
export function buildSeccompProgram(
  arch: SeccompArch,
  network: SeccompNetwork,
  options: SeccompProgramOptions = {},
): Uint8Array {
  return compileSeccompRules(arch, seccompRules(network, options));
}

/**
 * Any list of rules as a filter program (the architecture check first, the rules in order, everything
 * else allowed). One rule per syscall; a syscall this architecture lacks is skipped.
 */
export function compileSeccompRules(arch: SeccompArch, allRules: readonly SeccompRule[]): Uint8Array {
  const rules = allRules.filter((rule) => SYSCALLS[rule.syscall]?.[arch] !== undefined);
  const seen = new Set<string>();
  for (const rule of rules) {
    // The first rule of a syscall decides it; a second would never be reached.
    if (seen.has(rule.syscall)) throw new Error(`two seccomp rules for ${rule.syscall}`);
    seen.add(rule.syscall);
  }
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
  let fresh = 0;
  const label = () => `c${fresh++}`;
  // Jumps to `yes` when the condition holds, else to `no`.
  const emit = (condition: Condition, yes: string, no: string): void => {
    if ('allOf' in condition) {
      condition.allOf.forEach((part, index) => {
        const last = index === condition.allOf.length - 1;
        const next = last ? yes : label();
        emit(part, next, no);
        if (!last) checks.push({ op: 'label', name: next });
      });
      return;
    }
    checks.push({ op: 'ld', offset: DATA.argLow(condition.arg) });
    if ('notEqual' in condition) checks.push({ op: 'jeq', k: condition.notEqual, yes: no, no: yes });
    else if ('equal' in condition) checks.push({ op: 'jeq', k: condition.equal, yes, no });
    else if ('anyBits' in condition) checks.push({ op: 'jset', k: condition.anyBits, yes, no });
    else if ('notIn' in condition) {
      condition.notIn.forEach((value, index) => {
        const last = index === condition.notIn.length - 1;
        const next = last ? yes : label();
        checks.push({ op: 'jeq', k: value, yes: no, no: next });
        if (!last) checks.push({ op: 'label', name: next });
      });
    } else if ('maskedEqual' in condition)
      checks.push({ op: 'and', k: condition.mask }, { op: 'jeq', k: condition.maskedEqual, yes, no });
    else
      checks.push(
        { op: 'and', k: condition.mask },
        { op: 'jeq', k: condition.maskedNotEqual, yes: no, no: yes },
      );
  };
  rules.forEach((rule, index) => {
    const action = rule.notify ? 'notify' : `errno-${rule.errno}`;
    if (!rule.notify) errnos.add(rule.errno);
    const next = index + 1 < rules.length ? `rule-${index + 1}` : 'allow';
    program.push({ op: 'label', name: `rule-${index}` });
    const nr = SYSCALLS[rule.syscall]![arch]!;
    if (!rule.when) {
      program.push({ op: 'jeq', k: nr, yes: action, no: next });
      return;
    }
    program.push({ op: 'jeq', k: nr, yes: `check-${index}-0`, no: next });
    rule.when.forEach((condition, c) => {
      const more = c + 1 < rule.when!.length ? `check-${index}-${c + 1}` : 'allow';
      checks.push({ op: 'label', name: `check-${index}-${c}` });
      emit(condition, action, more);
    });
  });
  // Classic BPF jumps only forward: argument checks first, then every return.
  program.push(...checks);
  program.push({ op: 'label', name: 'allow' }, { op: 'ret', k: SECCOMP_RET_ALLOW });
  program.push({ op: 'label', name: 'kill' }, { op: 'ret', k: SECCOMP_RET_KILL_PROCESS });
  if (rules.some((rule) => rule.notify))
    program.push({ op: 'label', name: 'notify' }, { op: 'ret', k: SECCOMP_RET_USER_NOTIF });
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
