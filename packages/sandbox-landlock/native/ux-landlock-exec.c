/*
 * ux-landlock-exec: runs one command under a Landlock domain and ux's seccomp filter, in place (no
 * process stays between the host and the command, so signals reach it as they would unsandboxed).
 *
 *   ux-landlock-exec --abi
 *       prints the kernel's Landlock ABI version (0 when Landlock is missing or disabled) and exits 0.
 *   ux-landlock-exec [--min-abi N] [--ro P]… [--rw P]… [--dev P]… [--keep-fd N]… [--net-off] [--scope]
 *                    --seccomp-program HEX -- CMD [ARGS…]
 *
 *   --ro P      read (files and directories) and execute beneath P
 *   --rw P      every file-system right the ABI has beneath P (but making device nodes)
 *   --dev P     read, write and (ABI 5+) device ioctls beneath P (terminals, /dev/null); the terminal
 *               on descriptors 0-2, if any, gets the same by its own path (/dev/pts/N)
 *   --net-off   (ABI 4+) no TCP bind or connect at all
 *   --scope     (ABI 6+) no abstract unix socket and no signal reaches outside the domain
 *   --keep-fd N a descriptor above 2 the command inherits; every other one is closed
 *   --min-abi N fail unless the kernel has at least this ABI (what the plan was made for)
 *   --max-abi N use no right newer than ABI N (what an older kernel would enforce; for tests)
 *   --seccomp-program HEX   struct sock_filter records, in hex (ux's own filter, from the host's memory)
 *
 * Steps, in order: the ruleset (every right the ABI knows is handled: a right not granted is denied),
 * one rule per path through an O_PATH descriptor (a path that does not exist is skipped: it grants
 * nothing), every descriptor above 2 closed but the kept ones, the capability bounding set, ambient and
 * permitted sets emptied (a root caller keeps no capability), PR_SET_NO_NEW_PRIVS,
 * landlock_restrict_self, the seccomp filter, every signal at its default disposition and an empty
 * mask, then execvp. Exit status: the command's own (it replaces this process); 127 when CMD is not
 * found, 126 when it cannot be run; 125 with "ux: sandbox setup failed: <reason>" on stderr when
 * anything before the exec fails. The command never runs with less than all of it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXIT_SETUP 125
#define MAX_PROGRAM_BYTES (4096 * 8)

/* The kernel's uapi, spelled out: the build host's headers may predate the ABI this runs on. */
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)    /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define LL_NET_BIND_TCP (1ULL << 0) /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)

struct ll_ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct ll_path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

/* Rights that apply to a file (not a directory): the kernel refuses others on a file rule. */
#define LL_FILE_RIGHTS (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

static void setup_failed(const char *format, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void setup_failed(const char *format, ...) {
  char message[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  fprintf(stderr, "ux: sandbox setup failed: %s\n", message);
  _exit(EXIT_SETUP);
}

static int landlock_abi(void) {
  long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
  return abi < 0 ? 0 : (int)abi;
}

static uint64_t fs_rights(int abi) {
  uint64_t rights = (LL_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0..12 */
  if (abi >= 2) rights |= LL_FS_REFER;
  if (abi >= 3) rights |= LL_FS_TRUNCATE;
  if (abi >= 5) rights |= LL_FS_IOCTL_DEV;
  return rights;
}

static int parse_number(const char *text, int low, int high) {
  char *end;
  errno = 0;
  long value = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < low || value > high) return -1;
  return (int)value;
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static void decode_program(const char *hex, struct sock_fprog *program) {
  size_t digits = strlen(hex);
  if (digits == 0 || digits % 2 != 0) setup_failed("--seccomp-program needs an even number of hex digits");
  size_t bytes = digits / 2;
  if (bytes % sizeof(struct sock_filter) != 0 || bytes > MAX_PROGRAM_BYTES)
    setup_failed("--seccomp-program is not a seccomp program (%zu bytes)", bytes);
  unsigned char *data = malloc(bytes);
  if (!data) setup_failed("out of memory");
  for (size_t i = 0; i < bytes; i++) {
    int high = hex_digit(hex[2 * i]), low = hex_digit(hex[2 * i + 1]);
    if (high < 0 || low < 0) setup_failed("--seccomp-program holds a character that is not a hex digit");
    data[i] = (unsigned char)(high << 4 | low);
  }
  program->len = (unsigned short)(bytes / sizeof(struct sock_filter));
  program->filter = (struct sock_filter *)data;
}

static void add_rule(int ruleset, const char *path, uint64_t rights) {
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) {
    /* Missing: the rule would grant nothing. Anything else fails the launch (closed). */
    if (errno == ENOENT || errno == ENOTDIR) return;
    setup_failed("cannot open %s: %s", path, strerror(errno));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) setup_failed("cannot stat %s: %s", path, strerror(errno));
  if (!S_ISDIR(st.st_mode)) rights &= LL_FILE_RIGHTS;
  struct ll_path_beneath_attr rule = {.allowed_access = rights, .parent_fd = fd};
  if (rights != 0 && syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0) != 0)
    setup_failed("cannot add the Landlock rule for %s: %s", path, strerror(errno));
  close(fd);
}

/* Every descriptor above 2 but the kept ones: close_range between them, else one close per number up
 * to the soft limit (after the ruleset, which is close-on-exec anyway). */
static void close_other_fds(const int *keep, size_t count) {
  unsigned int from = 3;
  for (;;) {
    unsigned int next = ~0U;
    for (size_t i = 0; i < count; i++)
      if (keep[i] >= (int)from && (unsigned int)keep[i] < next) next = (unsigned int)keep[i];
    if (next > from && syscall(SYS_close_range, from, next - 1, 0) != 0) {
      long max = sysconf(_SC_OPEN_MAX);
      if (max < 0 || max > 1 << 20) max = 1 << 20;
      for (long fd = from; fd < max && (unsigned long)fd < next; fd++) close((int)fd);
    }
    if (next == ~0U) return;
    from = next + 1;
  }
}

/* No capability survives into the command: the bounding set (needs CAP_SETPCAP, which only a privileged
 * caller has; an unprivileged one has nothing to drop), the ambient set, then every set. */
static void drop_capabilities(void) {
  for (int cap = 0; cap <= 63; cap++) {
    if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) != 1) continue;
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EPERM)
      setup_failed("cannot drop capability %d from the bounding set: %s", cap, strerror(errno));
  }
  (void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  if (syscall(SYS_capset, &header, data) != 0) setup_failed("cannot drop capabilities: %s", strerror(errno));
  /* A root caller would get them back at the exec from the bounding set, were it not empty. */
  if (prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0) == 1 && geteuid() == 0)
    setup_failed("the capability bounding set cannot be emptied (CAP_SETPCAP missing) while running as root");
}

/* The signals libc keeps for itself (32 and 33 under glibc) refuse sigaction(); an ignored one is still
 * inherited (Node's children get 32 ignored), so it is reset with the raw system call. */
static void reset_reserved(int sig) {
  unsigned long zero[16] = {0}; /* SIG_DFL, no flags, no restorer, an empty mask */
  (void)syscall(SYS_rt_sigaction, sig, zero, NULL, (size_t)((NSIG - 1) / 8));
}

static void reset_signals(void) {
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig = 1; sig < NSIG; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    if (sigaction(sig, &dfl, NULL) != 0 && errno == EINVAL) reset_reserved(sig);
  }
  sigset_t empty;
  sigemptyset(&empty);
  (void)sigprocmask(SIG_SETMASK, &empty, NULL);
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--abi") == 0) {
    printf("%d\n", landlock_abi());
    return 0;
  }
  const char **ro = calloc((size_t)argc, sizeof *ro), **rw = calloc((size_t)argc, sizeof *rw),
             **dev = calloc((size_t)argc, sizeof *dev);
  int *keep = calloc((size_t)argc, sizeof *keep);
  if (!ro || !rw || !dev || !keep) setup_failed("out of memory");
  size_t nro = 0, nrw = 0, ndev = 0, nkeep = 0;
  int net_off = 0, scope = 0, min_abi = 1, max_abi = 0;
  const char *hex = NULL;
  int i = 1;
  for (; i < argc; i++) {
    const char *option = argv[i];
    if (strcmp(option, "--") == 0) {
      i++;
      break;
    }
    if (strcmp(option, "--net-off") == 0) {
      net_off = 1;
      continue;
    }
    if (strcmp(option, "--scope") == 0) {
      scope = 1;
      continue;
    }
    if (i + 1 >= argc) setup_failed("%s needs a value", option);
    const char *value = argv[++i];
    if (strcmp(option, "--ro") == 0 || strcmp(option, "--rw") == 0 || strcmp(option, "--dev") == 0) {
      if (value[0] != '/') setup_failed("%s needs an absolute path, got \"%s\"", option, value);
      if (option[2] == 'r' && option[3] == 'o') ro[nro++] = value;
      else if (option[2] == 'r') rw[nrw++] = value;
      else dev[ndev++] = value;
    } else if (strcmp(option, "--keep-fd") == 0) {
      int fd = parse_number(value, 3, 1023);
      if (fd < 0) setup_failed("--keep-fd needs a descriptor from 3 to 1023, got \"%s\"", value);
      keep[nkeep++] = fd;
    } else if (strcmp(option, "--min-abi") == 0) {
      min_abi = parse_number(value, 1, 1000);
      if (min_abi < 0) setup_failed("--min-abi needs a whole number, got \"%s\"", value);
    } else if (strcmp(option, "--max-abi") == 0) {
      max_abi = parse_number(value, 1, 1000);
      if (max_abi < 0) setup_failed("--max-abi needs a whole number, got \"%s\"", value);
    } else if (strcmp(option, "--seccomp-program") == 0) {
      hex = value;
    } else {
      setup_failed("unknown option %s", option);
    }
  }
  if (i >= argc) setup_failed("no command after --");
  if (!hex) setup_failed("--seccomp-program is required: no command runs without ux's seccomp filter");
  struct sock_fprog program;
  decode_program(hex, &program);

  int abi = landlock_abi();
  if (max_abi > 0 && abi > max_abi) abi = max_abi;
  if (abi < min_abi)
    setup_failed("the kernel offers Landlock ABI %d, and this sandbox needs %d or later%s", abi, min_abi,
                 abi == 0 ? " (Landlock is missing or disabled: boot with lsm=…,landlock)" : "");
  if (net_off && abi < 4) setup_failed("--net-off needs Landlock ABI 4 (the kernel offers %d)", abi);
  if (scope && abi < 6) setup_failed("--scope needs Landlock ABI 6 (the kernel offers %d)", abi);

  uint64_t all = fs_rights(abi);
  struct ll_ruleset_attr attr = {.handled_access_fs = all, .handled_access_net = 0, .scoped = 0};
  if (net_off) attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
  if (scope) attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
  size_t size = abi >= 6 ? sizeof attr : abi >= 4 ? 2 * sizeof(uint64_t) : sizeof(uint64_t);
  int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
  if (ruleset < 0) setup_failed("cannot create a Landlock ruleset: %s", strerror(errno));

  const uint64_t read = LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR;
  const uint64_t write = all & ~(LL_FS_MAKE_CHAR | LL_FS_MAKE_BLOCK | LL_FS_IOCTL_DEV);
  const uint64_t device = (LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_READ_DIR | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV) & all;
  for (size_t k = 0; k < nro; k++) add_rule(ruleset, ro[k], read);
  for (size_t k = 0; k < nrw; k++) add_rule(ruleset, rw[k], write);
  for (size_t k = 0; k < ndev; k++) add_rule(ruleset, dev[k], device);
  /* The command's own terminal, when descriptors 0-2 hold one, by its own path (/dev/pts/N): scripts
   * reopen it as /dev/stdout or /dev/stderr. Other terminals of the host's devpts stay out of reach. */
  for (int fd = 0; fd <= 2; fd++) {
    char name[256];
    if (isatty(fd) && ttyname_r(fd, name, sizeof name) == 0 && name[0] == '/') add_rule(ruleset, name, device);
  }

  drop_capabilities();
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) setup_failed("cannot set no_new_privs: %s", strerror(errno));
  if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0)
    setup_failed("cannot enforce the Landlock ruleset: %s", strerror(errno));
  close(ruleset);
  close_other_fds(keep, nkeep);
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) != 0)
    setup_failed("cannot install the seccomp filter: %s", strerror(errno));
  free(program.filter);

  reset_signals();
  char **command = argv + i;
  execvp(command[0], command);
  int error = errno;
  fprintf(stderr, "ux: %s: %s\n", command[0], strerror(error));
  _exit(error == ENOENT ? 127 : 126);
}
