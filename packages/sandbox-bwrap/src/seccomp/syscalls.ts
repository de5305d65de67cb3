/** The architectures the filter is generated for, with their audit identifiers. */
export const SECCOMP_ARCHES = {
  x64: { audit: 0xc000003e, x32Bit: 0x40000000 },
  arm64: { audit: 0xc00000b7, x32Bit: 0 },
} as const;
export type SeccompArch = keyof typeof SECCOMP_ARCHES;

/** Syscall numbers per architecture; `undefined` where the call does not exist (arm64 has no chmod). */
export const SYSCALLS: Record<string, Record<SeccompArch, number | undefined>> = {
  ioctl: { x64: 16, arm64: 29 },
  socket: { x64: 41, arm64: 198 },
  connect: { x64: 42, arm64: 203 },
  accept: { x64: 43, arm64: 202 },
  sendto: { x64: 44, arm64: 206 },
  bind: { x64: 49, arm64: 200 },
  listen: { x64: 50, arm64: 201 },
  socketpair: { x64: 53, arm64: 199 },
  clone: { x64: 56, arm64: 220 },
  chmod: { x64: 90, arm64: undefined },
  fchmod: { x64: 91, arm64: 52 },
  ptrace: { x64: 101, arm64: 117 },
  pivot_root: { x64: 155, arm64: 41 },
  mount: { x64: 165, arm64: 40 },
  umount2: { x64: 166, arm64: 39 },
  swapon: { x64: 167, arm64: 224 },
  swapoff: { x64: 168, arm64: 225 },
  reboot: { x64: 169, arm64: 142 },
  init_module: { x64: 175, arm64: 105 },
  delete_module: { x64: 176, arm64: 106 },
  kexec_load: { x64: 246, arm64: 104 },
  add_key: { x64: 248, arm64: 217 },
  request_key: { x64: 249, arm64: 218 },
  keyctl: { x64: 250, arm64: 219 },
  fchmodat: { x64: 268, arm64: 53 },
  unshare: { x64: 272, arm64: 97 },
  accept4: { x64: 288, arm64: 242 },
  perf_event_open: { x64: 298, arm64: 241 },
  name_to_handle_at: { x64: 303, arm64: 264 },
  open_by_handle_at: { x64: 304, arm64: 265 },
  setns: { x64: 308, arm64: 268 },
  process_vm_readv: { x64: 310, arm64: 270 },
  process_vm_writev: { x64: 311, arm64: 271 },
  finit_module: { x64: 313, arm64: 273 },
  kexec_file_load: { x64: 320, arm64: 294 },
  bpf: { x64: 321, arm64: 280 },
  userfaultfd: { x64: 323, arm64: 282 },
  io_uring_setup: { x64: 425, arm64: 425 },
  io_uring_enter: { x64: 426, arm64: 426 },
  io_uring_register: { x64: 427, arm64: 427 },
  open_tree: { x64: 428, arm64: 428 },
  move_mount: { x64: 429, arm64: 429 },
  fsopen: { x64: 430, arm64: 430 },
  fsconfig: { x64: 431, arm64: 431 },
  fsmount: { x64: 432, arm64: 432 },
  fspick: { x64: 433, arm64: 433 },
  clone3: { x64: 435, arm64: 435 },
  mount_setattr: { x64: 442, arm64: 442 },
  fchmodat2: { x64: 452, arm64: 452 },
  // Used by tests that take these away to check that ux-sandbox-exec fails closed.
  seccomp: { x64: 317, arm64: 277 },
  pidfd_open: { x64: 434, arm64: 434 },
  pidfd_getfd: { x64: 438, arm64: 438 },
  memfd_create: { x64: 319, arm64: 279 },
};

export const EPERM = 1;
export const ENOSYS = 38;
export const AF_UNIX = 1;
export const AF_INET = 2;
export const AF_INET6 = 10;
export const AF_VSOCK = 40;
export const SOCK_STREAM = 1;
export const SOCK_DGRAM = 2;
/** For AF_UNIX the kernel turns SOCK_RAW into SOCK_DGRAM. */
export const SOCK_RAW = 3;
/** socket()'s type without the SOCK_NONBLOCK (0x800) and SOCK_CLOEXEC (0x80000) flags. */
export const SOCK_TYPE_MASK = ~(0x800 | 0x80000) >>> 0;
export const TIOCSTI = 0x5412;
export const TIOCLINUX = 0x541c;
/** Every CLONE_NEW* flag: creating namespaces inside the sandbox is refused. */
export const CLONE_NEW_MASK =
  0x00000080 | 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000;
/** Set-user-ID and set-group-ID bits. */
export const SETID_BITS = 0o6000;
