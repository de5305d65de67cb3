/*
 * ux-sandbox-exec: runs inside the sandbox, before the command; and, in two modes of its own, on the
 * host: the launcher bwrap is started through, and a remover that works through descriptors.
 *
 *   ux-sandbox-exec <program> [args...]
 *   ux-sandbox-exec [options] -- <program> [args...]
 *   ux-sandbox-exec --launch [--keep-fd N]... --seccomp-program HEX -- <bwrap> [args...]
 *   ux-sandbox-exec --remove PATH...
 *
 * Options (only recognised when the first argument starts with "--"):
 *   --seccomp-fd N        read a seccomp program (struct sock_filter records) from descriptor N, close
 *                         it, and install it (PR_SET_NO_NEW_PRIVS, then seccomp) in the command's
 *                         process just before the exec; bwrap then gets no --seccomp.
 *   --bridge PORT=PATH    listen on 127.0.0.1:PORT (in the sandbox's own network namespace) and relay
 *                         every connection, both ways, to the Unix stream socket at PATH (the host's
 *                         network proxy, bound into the sandbox; opened once, before the command runs,
 *                         and connected to through that descriptor).
 *   --allow-unix PATH     (repeatable; needs --seccomp-fd whose program returns SECCOMP_RET_USER_NOTIF
 *                         for connect) supervise connect(): the filter is installed with a listener
 *                         that the helper serves. AF_UNIX to a listed absolute PATH is connected by the
 *                         helper, on the command's own socket; any other AF_UNIX address gets EACCES.
 *   --connect-ip          supervised connects to AF_INET, AF_INET6 (and AF_UNSPEC) addresses are made
 *                         on the command's behalf; without it they get EPERM, as does every other family.
 * Without --bridge and --allow-unix this process becomes the command, as it always did.
 *
 * The launcher (--launch, first argument), on the host, in place of a shell script: it sets SIGHUP,
 * SIGINT, SIGQUIT and SIGTERM to "ignore" (so bwrap survives the signals sent to the command's process
 * group; see Signals), closes every inherited descriptor above stderr except the --keep-fd ones (an
 * open descriptor to a file outside is a way out no mount can stop), writes the seccomp program given
 * in hex on its command line (the host's memory: no file any sandbox could rewrite, no path read at the
 * launch) into a memfd, seals it against every change (F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_WRITE,
 * F_SEAL_SEAL), puts it on descriptor 3 (not close-on-exec, at offset 0) and execs bwrap, which reads
 * it with --seccomp 3, or passes it to this program inside (--seccomp-fd 3). A kernel without memfd
 * sealing fails the launch (exit 125): there is no fallback to a file.
 *
 * The remover (--remove, first argument), on the host: removes each PATH (a directory tree of ux's own
 * runtime files, which a sandboxed command may have been able to write into: the session's private
 * /tmp) without ever following a symbolic link or walking a path: each directory is opened O_NOFOLLOW
 * relative to its parent's descriptor and emptied through its own descriptor, so a directory swapped
 * for a symbolic link mid-removal loses the link, never what it points to. Nothing on another file
 * system is entered. Directories nested deeper than REMOVE_MAX_DEPTH are moved up into PATH and removed
 * in a later pass. PATH's parent is opened by its path (it is ux's runtime root, out of every sandbox's
 * reach). Exit 0 when every PATH is gone, 1 (with a line on stderr) when something stayed.
 *
 * Signals. The host makes bubblewrap ignore SIGINT, SIGQUIT, SIGTERM and SIGHUP, so that a Ctrl-C sent
 * to the whole process group does not kill the sandbox wrapper before it can clean up. Ignored
 * dispositions survive exec, and a POSIX shell cannot un-ignore a signal that was ignored when it
 * started, so this program gives the command what it would have had without the sandbox: every signal
 * at its default disposition and an empty signal mask. glibc refuses to change the two signals it
 * reserves for itself (SIGCANCEL and SIGSETXID, 32 and 33 on Linux), and a host may have them ignored
 * (libuv resets only signals 1 to 31 for its children): those are reset with the system call directly.
 *
 * The helper. With --bridge or --allow-unix this process stays as the helper (bridge and connect
 * supervisor) and forks the command, which installs the filter; the helper keeps the rights the command
 * loses. bwrap runs it with --as-pid-1, so it is the sandbox's init (bwrap's own init would run without
 * the filter, and the command, same uid, could write its /proc/1/mem). It is the command's parent,
 * never a child the command could wait for; it is not dumpable (a command of the same uid cannot open
 * its /proc/<pid>/mem or fd/ and use its unfiltered sockets); it ignores the terminal signals and
 * SIGPIPE and leaves the command's session after the fork (a Ctrl-C to the command's group never
 * reaches it); it reaps every child and exits with the command's status as soon as the command ends,
 * which ends the pid namespace and everything in it.
 *
 * Exit status: the command's own once it runs (128 + N for a death by signal N when the helper is the
 * namespace's init, as bwrap reports it); 127 when the program is not found, 126 when it cannot be run;
 * 125, with a "ux: sandbox setup failed: ..." line on stderr, when something above cannot be set up
 * (bad options, unreadable filter, port in use, the proxy's socket missing, a kernel without user
 * notification, pidfd_open or pidfd_getfd, or for the launcher memfd sealing): the command never runs
 * without its filter.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXIT_SETUP 125
#define RELAY_BUFFER (64 * 1024)
#define THREAD_STACK (256 * 1024)
#define MAX_PROGRAM_BYTES (BPF_MAXINSNS * sizeof(struct sock_filter))

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef SYS_memfd_create
#define SYS_memfd_create __NR_memfd_create
#endif
#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 0x0001U
#endif
#ifndef MFD_ALLOW_SEALING
#define MFD_ALLOW_SEALING 0x0002U
#endif
#ifndef F_ADD_SEALS
#define F_ADD_SEALS 1033
#define F_GET_SEALS 1034
#define F_SEAL_SEAL 0x0001
#define F_SEAL_SHRINK 0x0002
#define F_SEAL_GROW 0x0004
#define F_SEAL_WRITE 0x0008
#endif
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
/* The descriptor the launcher puts the seccomp program on (SECCOMP_FD in bwrap-plan.ts). */
#define LAUNCH_SECCOMP_FD 3
#define REMOVE_MAX_DEPTH 64
#define REMOVE_PASSES 16
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
#ifdef SECCOMP_IOCTL_NOTIF_ID_VALID
#define HAVE_USER_NOTIF 1
#else
#define HAVE_USER_NOTIF 0
#endif

/* ---------------------------------------------------------------------------------------------- */
/* Common helpers */

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

static int pidfd_open_(pid_t pid, unsigned int flags) { return (int)syscall(SYS_pidfd_open, pid, flags); }

static int pidfd_getfd_(int pidfd, int fd) { return (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0); }

static void reset_reserved(int sig) {
#ifdef SYS_rt_sigaction
  /* SIG_DFL, no flags, no restorer, an empty mask: all zeros, whatever the kernel's layout. */
  unsigned long zero[16] = {0};
  (void)syscall(SYS_rt_sigaction, sig, zero, NULL, (size_t)((NSIG - 1) / 8));
#else
  (void)sig;
#endif
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

/* Writes all of buf to a socket; -1 with errno on failure. Never raises SIGPIPE. */
static int send_all(int fd, const char *buf, size_t len) {
  while (len > 0) {
    ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    buf += n;
    len -= (size_t)n;
  }
  return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* Options */

struct options {
  int seccomp_fd;
  int bridge_port;
  const char *bridge_path;
  const char **allow_unix;
  size_t allow_count;
  int connect_ip;
  char **command;
};

static int parse_fd(const char *text) {
  char *end;
  errno = 0;
  long value = strtol(text, &end, 10);
  if (errno != 0 || *text == '\0' || *end != '\0' || value < 0 || value > INT_MAX) return -1;
  return (int)value;
}

static void parse_options(int argc, char **argv, struct options *options) {
  memset(options, 0, sizeof *options);
  options->seccomp_fd = -1;
  if (argc < 2) {
    /* As before the options existed (they are described at the top of this file). */
    fputs("usage: ux-sandbox-exec <program> [args...]\n", stderr);
    exit(127);
  }
  if (strncmp(argv[1], "--", 2) != 0) {
    /* Today's form: ux-sandbox-exec <program> [args...] */
    options->command = &argv[1];
    return;
  }
  options->allow_unix = calloc((size_t)argc, sizeof(char *));
  if (!options->allow_unix) setup_failed("out of memory");
  int i = 1;
  for (; i < argc; i++) {
    const char *arg = argv[i];
    if (strcmp(arg, "--") == 0) {
      i++;
      break;
    }
    if (strncmp(arg, "--", 2) != 0) setup_failed("expected an option or \"--\" before the command, got \"%s\"", arg);
    if (strcmp(arg, "--connect-ip") == 0) {
      options->connect_ip = 1;
      continue;
    }
    if (i + 1 >= argc) setup_failed("option %s needs a value", arg);
    const char *value = argv[++i];
    if (strcmp(arg, "--seccomp-fd") == 0) {
      options->seccomp_fd = parse_fd(value);
      if (options->seccomp_fd < 0) setup_failed("--seccomp-fd needs a descriptor number, got \"%s\"", value);
    } else if (strcmp(arg, "--bridge") == 0) {
      const char *equals = strchr(value, '=');
      int port = -1;
      if (equals && equals != value && equals - value < 8) {
        char digits[8];
        memcpy(digits, value, (size_t)(equals - value));
        digits[equals - value] = '\0';
        port = parse_fd(digits);
      }
      if (port < 1 || port > 65535 || equals[1] != '/')
        setup_failed("--bridge needs PORT=/absolute/socket/path, got \"%s\"", value);
      options->bridge_port = port;
      options->bridge_path = equals + 1;
    } else if (strcmp(arg, "--allow-unix") == 0) {
      if (value[0] != '/') setup_failed("--allow-unix needs an absolute path, got \"%s\"", value);
      options->allow_unix[options->allow_count++] = value;
    } else {
      setup_failed("unknown option %s", arg);
    }
  }
  if (i >= argc) setup_failed("no command after the options");
  if (options->allow_count > 0 && options->seccomp_fd < 0)
    setup_failed("--allow-unix needs --seccomp-fd (the filter that hands connect() to the supervisor)");
  options->command = &argv[i];
}

/* Reads a whole seccomp program from fd and closes fd. */
static void read_program(int fd, struct sock_fprog *program) {
  char *buffer = malloc(MAX_PROGRAM_BYTES + 1);
  if (!buffer) setup_failed("out of memory");
  size_t total = 0;
  for (;;) {
    ssize_t n = read(fd, buffer + total, MAX_PROGRAM_BYTES + 1 - total);
    if (n < 0) {
      if (errno == EINTR) continue;
      setup_failed("cannot read the seccomp program from descriptor %d: %s", fd, strerror(errno));
    }
    if (n == 0) break;
    total += (size_t)n;
    if (total > MAX_PROGRAM_BYTES) setup_failed("the seccomp program on descriptor %d is too long", fd);
  }
  close(fd);
  if (total == 0 || total % sizeof(struct sock_filter) != 0)
    setup_failed("descriptor %d does not hold a seccomp program (%zu bytes)", fd, total);
  program->len = (unsigned short)(total / sizeof(struct sock_filter));
  program->filter = (struct sock_filter *)buffer;
}

/* ---------------------------------------------------------------------------------------------- */
/* Allowed unix sockets: the path as listed, and where it resolved inside the sandbox before the command
 * started. A connect is made only when the path still resolves there, so a command cannot point a
 * listed name at another socket by swapping a symbolic link or a directory it can write. */

struct allowed {
  const char *path;
  char *resolved;
};

static struct allowed *g_allowed;
static size_t g_allowed_count;

/* realpath() for a path that may not exist yet: the existing prefix resolved, the rest appended. */
static char *resolve_path(const char *path) {
  char *real = realpath(path, NULL);
  if (real) return real;
  const char *slash = strrchr(path, '/');
  if (!slash || slash == path) {
    /* "/name": the root is its own canonical form. */
    char *joined = malloc(strlen(path) + 1);
    if (joined) strcpy(joined, path);
    return joined;
  }
  char *parent_path = strndup(path, (size_t)(slash - path));
  if (!parent_path) return NULL;
  char *parent = resolve_path(parent_path);
  free(parent_path);
  if (!parent) return NULL;
  size_t parent_len = strlen(parent);
  char *joined = malloc(parent_len + strlen(slash) + 1);
  if (joined) {
    memcpy(joined, parent, parent_len);
    strcpy(joined + (parent_len == 1 ? 0 : parent_len), slash);
  }
  free(parent);
  return joined;
}

/* ---------------------------------------------------------------------------------------------- */
/* The bridge: 127.0.0.1:PORT -> the proxy's Unix socket. One thread per direction per connection,
 * blocking reads and writes of up to 64 KiB: no polling loop to spin, and the kernel wakes exactly the
 * thread that has work. (splice() through a pipe was measured slower here: bench/network.) End of input on one side is passed on as shutdown(SHUT_WR) on the other; an
 * error on either side shuts both down, which wakes the thread of the other direction. */

static const char *g_bridge_path;
/* "/proc/self/fd/N" of an O_PATH descriptor of the proxy's socket, opened before the command starts:
 * every connection goes to that socket, whatever the command later does to the path's directories. */
static char g_bridge_target[64];
static atomic_int g_bridge_warned;

static int pin_bridge_target(const char *path) {
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) setup_failed("the network proxy's socket %s cannot be opened: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode))
    setup_failed("the network proxy's socket %s is not a socket", path);
  snprintf(g_bridge_target, sizeof g_bridge_target, "/proc/self/fd/%d", fd);
  return fd;
}

struct relay {
  int client;
  int upstream;
  atomic_int refs;
};

static void relay_release(struct relay *relay) {
  if (atomic_fetch_sub(&relay->refs, 1) == 1) {
    close(relay->client);
    close(relay->upstream);
    free(relay);
  }
}

static void pump(struct relay *relay, int from, int to) {
  char *buffer = malloc(RELAY_BUFFER);
  int failed = buffer == NULL;
  while (!failed) {
    ssize_t n = read(from, buffer, RELAY_BUFFER);
    if (n == 0) {
      shutdown(to, SHUT_WR);
      break;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      failed = 1;
      break;
    }
    if (send_all(to, buffer, (size_t)n) != 0) failed = 1;
  }
  if (failed) {
    shutdown(from, SHUT_RDWR);
    shutdown(to, SHUT_RDWR);
  }
  free(buffer);
  relay_release(relay);
}

static void *pump_down(void *arg) {
  struct relay *relay = arg;
  pump(relay, relay->upstream, relay->client);
  return NULL;
}

static int start_thread(void *(*run)(void *), void *arg) {
  pthread_attr_t attr;
  pthread_t thread;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, THREAD_STACK);
  int error = pthread_create(&thread, &attr, run, arg);
  pthread_attr_destroy(&attr);
  return error;
}

static void *serve_client(void *arg) {
  int client = (int)(intptr_t)arg;
  int upstream = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un address;
  memset(&address, 0, sizeof address);
  address.sun_family = AF_UNIX;
  strncpy(address.sun_path, g_bridge_target, sizeof address.sun_path - 1);
  if (upstream < 0 || connect(upstream, (struct sockaddr *)&address, sizeof address) != 0) {
    int error = errno;
    if (atomic_exchange(&g_bridge_warned, 1) == 0)
      fprintf(stderr, "ux: the sandbox cannot reach the network proxy at %s: %s\n", g_bridge_path,
              strerror(error));
    /* A reset, not an orderly end: the client sees a failed connection, not an empty answer. */
    struct linger linger = {.l_onoff = 1, .l_linger = 0};
    setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, sizeof linger);
    close(client);
    if (upstream >= 0) close(upstream);
    return NULL;
  }
  struct relay *relay = malloc(sizeof *relay);
  if (!relay) {
    close(client);
    close(upstream);
    return NULL;
  }
  relay->client = client;
  relay->upstream = upstream;
  atomic_init(&relay->refs, 2);
  if (start_thread(pump_down, relay) != 0) {
    relay_release(relay);
    relay_release(relay);
    return NULL;
  }
  pump(relay, client, upstream);
  return NULL;
}

static int open_bridge_listener(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) setup_failed("cannot create the proxy bridge's socket: %s", strerror(errno));
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in address;
  memset(&address, 0, sizeof address);
  address.sin_family = AF_INET;
  address.sin_port = htons((uint16_t)port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, (struct sockaddr *)&address, sizeof address) != 0)
    setup_failed("the proxy bridge cannot listen on 127.0.0.1:%d: %s", port, strerror(errno));
  if (listen(fd, SOMAXCONN) != 0)
    setup_failed("the proxy bridge cannot listen on 127.0.0.1:%d: %s", port, strerror(errno));
  return fd;
}

/* ---------------------------------------------------------------------------------------------- */
/* The connect supervisor (seccomp user notification). Each notification is handled on a thread of its
 * own, so a blocking connect (a slow TCP handshake) never holds up the others. The address is copied
 * once out of the command's memory and everything after uses that copy; the notification is checked to
 * be still pending after the copy and after the pidfd is opened (the pid could have been reused); the
 * connect is made here, on the command's own socket (pidfd_getfd), never let through with
 * SECCOMP_USER_NOTIF_FLAG_CONTINUE, which would make the kernel read the address again. */

#if HAVE_USER_NOTIF
static int g_notify_fd = -1;
static int g_connect_ip;
static struct seccomp_notif_sizes g_sizes;
static atomic_int g_memory_warned;

struct pending {
  struct seccomp_notif *notif; /* g_sizes.seccomp_notif bytes */
};

static int notification_valid(uint64_t id) {
  return ioctl(g_notify_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* Room for the kernel's struct seccomp_notif_resp, whatever its size (24 bytes today). */
union response_buffer {
  struct seccomp_notif_resp response;
  char room[512];
};

static void respond(uint64_t id, int error) {
  union response_buffer buffer;
  memset(&buffer, 0, sizeof buffer);
  buffer.response.id = id;
  buffer.response.error = error ? -error : 0;
  /* ENOENT: the command's call was interrupted or the process is gone; nothing to answer. */
  (void)ioctl(g_notify_fd, SECCOMP_IOCTL_NOTIF_SEND, &buffer.response);
}

static int read_memory(pid_t pid, uint64_t remote, void *local, size_t length) {
  struct iovec mine = {.iov_base = local, .iov_len = length};
  struct iovec theirs = {.iov_base = (void *)(uintptr_t)remote, .iov_len = length};
  ssize_t n = process_vm_readv(pid, &mine, 1, &theirs, 1, 0);
  if (n == (ssize_t)length) return 0;
  if (n >= 0) return EFAULT;
  int error = errno;
  if (error == EFAULT || error == ESRCH) return error;
  /* process_vm_readv may be missing or refused where /proc/<pid>/mem is not. */
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return error;
  n = pread(fd, local, length, (off_t)remote);
  int read_error = errno;
  close(fd);
  if (n == (ssize_t)length) return 0;
  return n < 0 ? (read_error == EIO ? EFAULT : read_error) : EFAULT;
}

/* A pidfd for the thread that made the call. A thread that is not its process's leader is refused
 * without PIDFD_THREAD (EINVAL before Linux 6.9, ENOENT since), which older kernels lack (EINVAL):
 * then the pidfd of its process, found through /proc. */
static int open_caller(pid_t tid) {
  int fd = pidfd_open_(tid, 0);
  if (fd >= 0 || (errno != EINVAL && errno != ENOENT)) return fd;
  fd = pidfd_open_(tid, PIDFD_THREAD);
  if (fd >= 0 || errno != EINVAL) return fd;
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
  FILE *status = fopen(path, "re");
  if (!status) return -1;
  char line[256];
  pid_t tgid = -1;
  while (fgets(line, sizeof line, status))
    if (strncmp(line, "Tgid:", 5) == 0) tgid = (pid_t)atoi(line + 5);
  fclose(status);
  if (tgid <= 0) {
    errno = ESRCH;
    return -1;
  }
  return pidfd_open_(tgid, 0);
}

/* Connects the caller's socket `fd` to `address`; 0 or an errno value. */
static int connect_for(const struct seccomp_notif *notif, int fd, const struct sockaddr *address,
                       socklen_t length) {
  int pidfd = open_caller((pid_t)notif->pid);
  if (pidfd < 0) return errno == ESRCH ? ESRCH : EACCES;
  if (!notification_valid(notif->id)) {
    close(pidfd);
    return ESRCH;
  }
  int socket_fd = pidfd_getfd_(pidfd, fd);
  int error = errno;
  close(pidfd);
  if (socket_fd < 0) return error == EBADF ? EBADF : error == ESRCH ? ESRCH : EACCES;
  int result = connect(socket_fd, address, length) == 0 ? 0 : errno;
  close(socket_fd);
  return result;
}

/* The decision for an AF_UNIX address: 0 and a connect made, or an errno value. */
static int connect_unix(const struct seccomp_notif *notif, int fd, const struct sockaddr_un *address,
                        socklen_t length) {
  size_t offset = offsetof(struct sockaddr_un, sun_path);
  if (length > (socklen_t)sizeof(struct sockaddr_un)) return EINVAL; /* as the kernel answers */
  if (length <= offset) return EACCES;                             /* unnamed */
  size_t room = length - offset;
  if (address->sun_path[0] == '\0') return EACCES; /* abstract */
  char path[sizeof address->sun_path + 1];
  size_t path_len = strnlen(address->sun_path, room);
  memcpy(path, address->sun_path, path_len);
  path[path_len] = '\0';
  if (path[0] != '/') return EACCES; /* relative: resolved against a cwd the command controls */
  const struct allowed *entry = NULL;
  for (size_t i = 0; i < g_allowed_count; i++)
    if (strcmp(g_allowed[i].path, path) == 0) entry = &g_allowed[i];
  if (!entry) return EACCES;
  int target = open(path, O_PATH | O_CLOEXEC);
  if (target < 0) return errno;
  char link_path[64];
  snprintf(link_path, sizeof link_path, "/proc/self/fd/%d", target);
  char resolved[PATH_MAX];
  ssize_t n = readlink(link_path, resolved, sizeof resolved - 1);
  struct stat st;
  int error = 0;
  if (n < 0 || fstat(target, &st) != 0) error = EACCES;
  else {
    resolved[n] = '\0';
    if (!entry->resolved || strcmp(resolved, entry->resolved) != 0) error = EACCES;
    else if (!S_ISSOCK(st.st_mode)) error = ECONNREFUSED;
  }
  if (error == 0) {
    /* Through the descriptor just checked, not the path, which could change again. */
    struct sockaddr_un pinned;
    memset(&pinned, 0, sizeof pinned);
    pinned.sun_family = AF_UNIX;
    snprintf(pinned.sun_path, sizeof pinned.sun_path, "%s", link_path);
    error = connect_for(notif, fd, (struct sockaddr *)&pinned, (socklen_t)sizeof pinned);
  }
  close(target);
  return error;
}

static void *handle_notification(void *arg) {
  struct pending *pending = arg;
  const struct seccomp_notif *notif = pending->notif;
  const struct seccomp_data *data = &notif->data;
  int error = EPERM;
  if (data->nr == SYS_connect) {
    int fd = (int)data->args[0];
    uint64_t pointer = data->args[1];
    int64_t length = (int32_t)(uint32_t)data->args[2];
    struct sockaddr_storage address;
    memset(&address, 0, sizeof address);
    if (length < 0 || length > (int64_t)sizeof address) error = EINVAL;
    else if (length < (int64_t)sizeof(sa_family_t)) error = EINVAL;
    else if ((error = read_memory((pid_t)notif->pid, pointer, &address, (size_t)length)) != 0) {
      if (error != EFAULT && error != ESRCH) {
        if (atomic_exchange(&g_memory_warned, 1) == 0)
          fprintf(stderr, "ux: the sandbox's connect supervisor cannot read the command's memory: %s\n",
                  strerror(error));
        error = EACCES;
      }
    } else if (!notification_valid(notif->id)) {
      error = ESRCH;
    } else if (address.ss_family == AF_UNIX) {
      error = connect_unix(notif, fd, (struct sockaddr_un *)&address, (socklen_t)length);
    } else if (address.ss_family == AF_INET || address.ss_family == AF_INET6 ||
               address.ss_family == AF_UNSPEC) {
      error = g_connect_ip ? connect_for(notif, fd, (struct sockaddr *)&address, (socklen_t)length) : EPERM;
    } else {
      error = EPERM;
    }
  }
  /* Always answered: a caller still waiting must not hang. When it is gone, the answer is dropped. */
  respond(notif->id, error == ESRCH ? EACCES : error);
  free(pending->notif);
  free(pending);
  return NULL;
}

static void receive_notification(void) {
  size_t size = g_sizes.seccomp_notif > sizeof(struct seccomp_notif) ? g_sizes.seccomp_notif
                                                                      : sizeof(struct seccomp_notif);
  struct pending *pending = malloc(sizeof *pending);
  struct seccomp_notif *notif = calloc(1, size);
  if (!pending || !notif) {
    /* Out of memory: still take the call off the queue (or poll would report it again at once) and
     * refuse it. */
    free(pending);
    free(notif);
    union {
      struct seccomp_notif notif;
      char room[1024];
    } spare;
    memset(&spare, 0, sizeof spare);
    if (size <= sizeof spare && ioctl(g_notify_fd, SECCOMP_IOCTL_NOTIF_RECV, &spare.notif) == 0)
      respond(spare.notif.id, EAGAIN);
    return;
  }
  if (ioctl(g_notify_fd, SECCOMP_IOCTL_NOTIF_RECV, notif) != 0) {
    /* ENOENT: the caller went away between the wake-up and the read. */
    free(pending);
    free(notif);
    return;
  }
  pending->notif = notif;
  if (start_thread(handle_notification, pending) != 0) {
    respond(notif->id, EAGAIN);
    free(notif);
    free(pending);
  }
}
#endif

/* Fails (exit 125) when the kernel cannot supervise connect(): no user notification, no pidfds. */
static void check_supervision_support(void) {
#if HAVE_USER_NOTIF
  struct seccomp_notif_sizes sizes;
  if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0)
    setup_failed("allowUnixSockets needs seccomp user notification (Linux 5.0 or later): %s",
                 strerror(errno));
  int pidfd = pidfd_open_(getpid(), 0);
  if (pidfd < 0)
    setup_failed("allowUnixSockets needs pidfd_open (Linux 5.3 or later): %s", strerror(errno));
  int copy = pidfd_getfd_(pidfd, pidfd);
  int error = errno;
  close(pidfd);
  if (copy < 0)
    setup_failed("allowUnixSockets needs pidfd_getfd (Linux 5.6 or later): %s", strerror(error));
  close(copy);
#else
  setup_failed("allowUnixSockets needs seccomp user notification, which this build of ux-sandbox-exec "
               "lacks (compiled against kernel headers older than Linux 5.0)");
#endif
}

/* ---------------------------------------------------------------------------------------------- */
/* Passing the listener descriptor from the command to the helper */

static int send_fd(int sock, int fd) {
  char byte = 'L';
  struct iovec iov = {.iov_base = &byte, .iov_len = 1};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } control;
  memset(&control, 0, sizeof control);
  struct msghdr message = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                           .msg_controllen = sizeof control.buf};
  struct cmsghdr *cmsg = CMSG_FIRSTHDR(&message);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(cmsg), &fd, sizeof fd);
  for (;;) {
    ssize_t n = sendmsg(sock, &message, MSG_NOSIGNAL);
    if (n == 1) return 0;
    if (n < 0 && errno == EINTR) continue;
    return -1;
  }
}

static int receive_fd(int sock) {
  char byte;
  struct iovec iov = {.iov_base = &byte, .iov_len = 1};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } control;
  struct msghdr message = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                           .msg_controllen = sizeof control.buf};
  ssize_t n;
  do n = recvmsg(sock, &message, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n != 1) return -1;
  struct cmsghdr *cmsg = CMSG_FIRSTHDR(&message);
  if (!cmsg || cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS ||
      cmsg->cmsg_len != CMSG_LEN(sizeof(int)))
    return -1;
  int fd;
  memcpy(&fd, CMSG_DATA(cmsg), sizeof fd);
  return fd;
}

/* ---------------------------------------------------------------------------------------------- */
/* The helper process */

static int is_kept(int fd, const int *keep, size_t count) {
  for (size_t i = 0; i < count; i++)
    if (keep[i] == fd) return 1;
  return 0;
}

/* Closes every descriptor above 2 except those in keep (the escalation socket of ZshFork, say, or the
 * seccomp program's descriptor are not the helper's business). close_range where the kernel has it
 * (5.9), else the entries of /proc/self/fd. */
static void close_other_fds(const int *keep, size_t count) {
  unsigned int from = 3;
  for (;;) {
    unsigned int next = ~0U;
    for (size_t i = 0; i < count; i++)
      if (keep[i] >= (int)from && (unsigned int)keep[i] < next) next = (unsigned int)keep[i];
    if (next > from && syscall(SYS_close_range, from, next - 1, 0) != 0) break;
    if (next == ~0U) return;
    from = next + 1;
  }
  int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return;
  char buffer[4096];
  int fds[1024];
  size_t found = 0;
  for (;;) {
    long n = syscall(SYS_getdents64, dir, buffer, sizeof buffer);
    if (n <= 0) break;
    for (long offset = 0; offset < n;) {
      unsigned short record = *(unsigned short *)(buffer + offset + 16);
      const char *name = buffer + offset + 19;
      int fd = parse_fd(name);
      if (fd > 2 && fd != dir && !is_kept(fd, keep, count) && found < 1024) fds[found++] = fd;
      offset += record;
    }
  }
  close(dir);
  for (size_t i = 0; i < found; i++) close(fds[i]);
}

static void ignore_signals(void) {
  struct sigaction ignore;
  memset(&ignore, 0, sizeof ignore);
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  const int signals[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU};
  for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) sigaction(signals[i], &ignore, NULL);
}

/* Ends this process the way the command ended: its exit code, or its signal (128 + N where a signal
 * cannot end us: the init of a pid namespace is immune to its own signals, and bwrap reports a
 * command killed by signal N as exit status 128 + N anyway). */
static void exit_like(int status) __attribute__((noreturn));
static void exit_like(int status) {
  if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
  int sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
  if (getpid() != 1 && sig != SIGKILL && sig != SIGSTOP) {
    signal(sig, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    sigprocmask(SIG_UNBLOCK, &only, NULL);
    kill(getpid(), sig);
  }
  _exit(128 + sig);
}

/* Set up before the command is forked: SIGCHLD at its default disposition (never an inherited SIG_IGN,
 * which makes the kernel reap children unseen) and blocked, so that it stays pending until read; a
 * signalfd to read it from (-1 if none can be made: the helper then looks every 100 ms, or on its pidfd). */
static int watch_children(void) {
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  if (sigaction(SIGCHLD, &dfl, NULL) != 0) setup_failed("cannot reset SIGCHLD: %s", strerror(errno));
  sigset_t child_signal;
  sigemptyset(&child_signal);
  sigaddset(&child_signal, SIGCHLD);
  if (sigprocmask(SIG_BLOCK, &child_signal, NULL) != 0) setup_failed("cannot block SIGCHLD: %s", strerror(errno));
  return signalfd(-1, &child_signal, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* Reaps every child that has ended (orphans of the command come to the init); when the command is
 * among them, ends this process the way it ended. */
static void reap_children(pid_t command) {
  int status;
  pid_t pid;
  for (;;) {
    pid = waitpid(-1, &status, WNOHANG);
    if (pid == command) exit_like(status);
    if (pid > 0) continue;
    if (pid < 0 && errno == EINTR) continue;
    break;
  }
  if (pid < 0 && errno == ECHILD) {
    /* Cannot happen with SIGCHLD at its default: the command was reaped by someone else. */
    fputs("ux: the sandbox lost its command's exit status\n", stderr);
    _exit(EXIT_SETUP);
  }
}

/*
 * The helper: the parent of the command, and with bwrap's --as-pid-1 the init of the sandbox's pid
 * namespace. It reaps every process that ends up its child and exits with the command's status as
 * soon as the command ends (which ends the pid namespace, and every process in it, at once). Meanwhile
 * it serves the bridge's listener and the seccomp listener.
 */
static void run_helper(pid_t command, int children_fd, int command_fd, int bridge_fd, int bridge_target_fd,
                       int control_fd, const struct options *options) __attribute__((noreturn));
static void run_helper(pid_t command, int children_fd, int command_fd, int bridge_fd, int bridge_target_fd,
                       int control_fd, const struct options *options) {
  prctl(PR_SET_NAME, "ux-sandbox-net", 0, 0, 0);
  /* A session of its own: no terminal's signals, no Ctrl-C to the command's group reaches it. */
  (void)setsid();
  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull >= 0) {
    dup2(devnull, 0);
    dup2(devnull, 1);
    if (devnull > 2) close(devnull);
  }
  /* SIGCHLD stays blocked (since before the fork) and is read from children_fd; the threads started
   * below inherit the mask, so none of them can take the signal off the queue. */
  int keep[] = {bridge_fd, bridge_target_fd, control_fd, children_fd, command_fd};
  close_other_fds(keep, sizeof keep / sizeof keep[0]);

  int notify_fd = -1;
#if HAVE_USER_NOTIF
  if (control_fd >= 0) {
    if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &g_sizes) == 0) notify_fd = receive_fd(control_fd);
    char ack = 'A';
    /* Without the listener the command is not told to go on: it stops, with its message, before exec. */
    if (notify_fd >= 0) {
      g_notify_fd = notify_fd;
      g_connect_ip = options->connect_ip;
      (void)send_all(control_fd, &ack, 1);
    }
    close(control_fd);
  }
#else
  (void)options;
  if (control_fd >= 0) close(control_fd);
#endif

  struct pollfd fds[4];
  int backoff = 0;
  for (;;) {
    /* Before every sleep: reap whatever has ended, whether or not a wake-up said so. A command that
     * ended before or during the set-up above, or between the last look and this one, is found here;
     * one that ends after it leaves SIGCHLD pending (blocked) and the pidfd readable, both of which
     * poll sees however late it starts. */
    reap_children(command);
    nfds_t count = 0;
    int children_at = -1, bridge_at = -1, notify_at = -1;
    if (children_fd >= 0) {
      children_at = (int)count;
      fds[count++] = (struct pollfd){.fd = children_fd, .events = POLLIN};
    }
    if (command_fd >= 0) fds[count++] = (struct pollfd){.fd = command_fd, .events = POLLIN};
    if (bridge_fd >= 0 && !backoff) {
      bridge_at = (int)count;
      fds[count++] = (struct pollfd){.fd = bridge_fd, .events = POLLIN};
    }
    if (notify_fd >= 0) {
      notify_at = (int)count;
      fds[count++] = (struct pollfd){.fd = notify_fd, .events = POLLIN};
    }
    /* Without a signalfd and a pidfd (out of descriptors or memory, or an old kernel), look for the
     * command's end every 100 ms. */
    int timeout = backoff || (children_fd < 0 && command_fd < 0) ? 100 : -1;
    int ready = poll(fds, count, timeout);
    backoff = 0;
    if (ready < 0 && errno != EINTR && errno != ENOMEM) _exit(EXIT_SETUP);
    if (children_at >= 0 && fds[children_at].revents) {
      struct signalfd_siginfo info;
      while (read(children_fd, &info, sizeof info) > 0) {
      }
    }
    if (ready <= 0) continue;
    if (bridge_at >= 0 && (fds[bridge_at].revents & POLLIN)) {
      int client = accept4(bridge_fd, NULL, NULL, SOCK_CLOEXEC);
      if (client >= 0) {
        int one = 1;
        setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (start_thread(serve_client, (void *)(intptr_t)client) != 0) close(client);
      } else if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        backoff = 1; /* out of descriptors or memory: retry in 100 ms instead of spinning */
      }
    }
#if HAVE_USER_NOTIF
    if (notify_at >= 0) {
      short revents = fds[notify_at].revents;
      if (revents & POLLIN) receive_notification();
      else if (revents & (POLLHUP | POLLERR | POLLNVAL)) {
        /* Every filtered process is gone. */
        close(notify_fd);
        notify_fd = -1;
      }
    }
#else
    (void)notify_at;
#endif
  }
}

/* ---------------------------------------------------------------------------------------------- */

/* In the command's process, just before the exec: NNP and the filter (with a listener handed to the
 * helper when connect() is supervised). Any failure ends the process with 125: no command runs
 * without its filter. */
static void install_filter(struct sock_fprog *program, int supervise, int control_fd) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) setup_failed("cannot set no_new_privs: %s", strerror(errno));
  unsigned int flags = 0;
#if HAVE_USER_NOTIF
  if (supervise) flags |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
#endif
  long listener = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, program);
  if (listener < 0) setup_failed("cannot install the seccomp filter: %s", strerror(errno));
  free(program->filter);
  if (!supervise) return;
  /* Hand the listener to the helper and wait until it has it: a connect() must find a supervisor. */
  if (send_fd(control_fd, (int)listener) != 0)
    setup_failed("cannot hand the seccomp listener to the connect supervisor: %s", strerror(errno));
  close((int)listener);
  char ack;
  ssize_t n;
  do n = read(control_fd, &ack, 1);
  while (n < 0 && errno == EINTR);
  if (n != 1) setup_failed("the connect supervisor did not start");
  close(control_fd);
}

/* ---------------------------------------------------------------------------------------------- */
/* The launcher (--launch): bwrap starts through it, on the host */

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* The program's bytes, decoded from hex; a malformed or impossible program ends the launch. */
static unsigned char *decode_program(const char *hex, size_t *length) {
  size_t digits = strlen(hex);
  if (digits == 0 || digits % 2 != 0) setup_failed("--seccomp-program needs an even number of hex digits");
  size_t bytes = digits / 2;
  if (bytes % sizeof(struct sock_filter) != 0 || bytes > MAX_PROGRAM_BYTES)
    setup_failed("--seccomp-program is not a seccomp program (%zu bytes)", bytes);
  unsigned char *program = malloc(bytes);
  if (!program) setup_failed("out of memory");
  for (size_t i = 0; i < bytes; i++) {
    int high = hex_digit(hex[2 * i]), low = hex_digit(hex[2 * i + 1]);
    if (high < 0 || low < 0) setup_failed("--seccomp-program holds a character that is not a hex digit");
    program[i] = (unsigned char)(high << 4 | low);
  }
  *length = bytes;
  return program;
}

/* A sealed memfd holding the program, on LAUNCH_SECCOMP_FD, inheritable, at offset 0. */
static void sealed_program_on_fd(const unsigned char *program, size_t length) {
  int fd = (int)syscall(SYS_memfd_create, "ux-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    setup_failed("cannot create a sealed memory file for the seccomp program (memfd_create: %s); "
                 "ux needs memfd sealing (Linux 3.17 or later)",
                 strerror(errno));
  for (size_t done = 0; done < length;) {
    ssize_t n = write(fd, program + done, length - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) setup_failed("cannot write the seccomp program into its memory file: %s", strerror(errno));
    done += (size_t)n;
  }
  const int seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL;
  if (fcntl(fd, F_ADD_SEALS, seals) != 0)
    setup_failed("cannot seal the seccomp program's memory file (F_ADD_SEALS: %s); ux needs memfd sealing "
                 "(Linux 3.17 or later)",
                 strerror(errno));
  int now = fcntl(fd, F_GET_SEALS);
  if (now < 0 || (now & seals) != seals)
    setup_failed("the seccomp program's memory file is not sealed (F_GET_SEALS: %d)", now);
  if (lseek(fd, 0, SEEK_SET) != 0) setup_failed("cannot rewind the seccomp program: %s", strerror(errno));
  if (fd == LAUNCH_SECCOMP_FD) {
    if (fcntl(fd, F_SETFD, 0) != 0) setup_failed("cannot pass on the seccomp program: %s", strerror(errno));
  } else {
    /* dup2 leaves the copy without close-on-exec. */
    if (dup2(fd, LAUNCH_SECCOMP_FD) != LAUNCH_SECCOMP_FD)
      setup_failed("cannot put the seccomp program on descriptor %d: %s", LAUNCH_SECCOMP_FD, strerror(errno));
    close(fd);
  }
}

static void run_launcher(int argc, char **argv) __attribute__((noreturn));
static void run_launcher(int argc, char **argv) {
  /* First, as the shell script before it did: a Ctrl-C that lands now must not end the launch. bwrap
   * inherits the dispositions; ux-sandbox-exec inside gives the command its defaults back. */
  struct sigaction ignore;
  memset(&ignore, 0, sizeof ignore);
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  const int ignored[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM};
  for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++) sigaction(ignored[i], &ignore, NULL);

  int *keep = calloc((size_t)argc + 1, sizeof(int));
  if (!keep) setup_failed("out of memory");
  size_t kept = 0;
  const char *hex = NULL;
  int i = 2;
  for (; i < argc; i++) {
    const char *arg = argv[i];
    if (strcmp(arg, "--") == 0) {
      i++;
      break;
    }
    if (i + 1 >= argc) setup_failed("option %s needs a value", arg);
    const char *value = argv[++i];
    if (strcmp(arg, "--keep-fd") == 0) {
      int fd = parse_fd(value);
      if (fd <= LAUNCH_SECCOMP_FD)
        setup_failed("--keep-fd needs a descriptor above %d, got \"%s\"", LAUNCH_SECCOMP_FD, value);
      keep[kept++] = fd;
    } else if (strcmp(arg, "--seccomp-program") == 0) {
      hex = value;
    } else {
      setup_failed("unknown launcher option %s", arg);
    }
  }
  if (!hex) setup_failed("--launch needs --seccomp-program");
  if (i >= argc || argv[i][0] != '/') setup_failed("--launch needs the absolute path of bwrap after \"--\"");

  close_other_fds(keep, kept);
  size_t length = 0;
  unsigned char *program = decode_program(hex, &length);
  sealed_program_on_fd(program, length);
  free(program);
  free(keep);

  execv(argv[i], &argv[i]);
  int error = errno;
  fprintf(stderr, "ux: cannot run %s: %s\n", argv[i], strerror(error));
  _exit(error == ENOENT ? 127 : 126);
}

/* ---------------------------------------------------------------------------------------------- */
/* The remover (--remove): through descriptors, never following a link */

struct remover {
  int top_fd;            /* the directory being removed: deep subtrees are moved up into it */
  dev_t dev;             /* its file system: nothing on another one is entered */
  unsigned long moved;   /* names given to moved subtrees */
  int error;             /* the first error that left something behind */
};

static void remover_failed(struct remover *r, int error) {
  if (!r->error) r->error = error;
}

/*
 * A descriptor for reading the directory NAME in PARENTFD, opened without following a link, made
 * rwx for its owner when this user owns it (a command may have left it 000 or 500); -1 with errno
 * ELOOP or ENOTDIR when NAME is not a directory (any more).
 */
static int open_directory(struct remover *r, int parentfd, const char *name, struct stat *st) {
  int path_fd = openat(parentfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (path_fd < 0) return -1;
  if (fstat(path_fd, st) != 0) {
    int error = errno;
    close(path_fd);
    errno = error;
    return -1;
  }
  if (st->st_dev != r->dev) {
    close(path_fd);
    errno = EXDEV;
    return -1;
  }
  char proc[64];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", path_fd);
  if (st->st_uid == geteuid() && (st->st_mode & 0700) != 0700) (void)chmod(proc, (st->st_mode & 07777) | 0700);
  /* The same directory (the descriptor's, not a name's), now for reading. */
  int fd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fd = openat(path_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
  int error = errno;
  close(path_fd);
  errno = error;
  return fd;
}

static void remove_entry(struct remover *r, int parentfd, const char *name, int depth);

/* Removes everything in the directory FD (consumed). */
static void clear_directory(struct remover *r, int fd, int depth) {
  DIR *dir = fdopendir(fd);
  if (!dir) {
    remover_failed(r, errno);
    close(fd);
    return;
  }
  struct dirent *entry;
  while ((entry = readdir(dir)) != NULL) {
    if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
    remove_entry(r, dirfd(dir), entry->d_name, depth + 1);
  }
  closedir(dir);
}

static void remove_entry(struct remover *r, int parentfd, const char *name, int depth) {
  for (int attempt = 0; attempt < 8; attempt++) {
    /* Anything but a directory (a file, a link, a socket) goes with unlink, never followed. */
    if (unlinkat(parentfd, name, 0) == 0 || errno == ENOENT) return;
    if (errno != EISDIR && errno != EPERM) {
      remover_failed(r, errno);
      return;
    }
    struct stat st;
    int fd = open_directory(r, parentfd, name, &st);
    if (fd < 0) {
      if (errno == ENOENT) return;
      if (errno == ELOOP || errno == ENOTDIR) continue; /* swapped for a link or a file: unlink that */
      remover_failed(r, errno);
      return;
    }
    if (depth >= REMOVE_MAX_DEPTH) {
      /* Too deep to hold one more descriptor: move it up into the top directory, for a later pass. */
      close(fd);
      char moved[64];
      snprintf(moved, sizeof moved, ".ux-remove-%lu", r->moved++);
      if (syscall(SYS_renameat2, parentfd, name, r->top_fd, moved, RENAME_NOREPLACE) != 0 && errno != ENOENT)
        remover_failed(r, errno);
      return;
    }
    clear_directory(r, fd, depth);
    if (unlinkat(parentfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT) return;
    if (errno != ENOTEMPTY && errno != EEXIST) {
      remover_failed(r, errno);
      return;
    }
    /* Something was added meanwhile: again. */
  }
  remover_failed(r, ENOTEMPTY);
}

/* Removes PATH (absolute); 0 when it is gone, else an errno value. */
static int remove_tree(const char *path) {
  if (path[0] != '/' || strcmp(path, "/") == 0) return EINVAL;
  const char *slash = strrchr(path, '/');
  const char *name = slash + 1;
  if (*name == '\0' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) return EINVAL;
  char *parent = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
  if (!parent) return ENOMEM;
  int parent_fd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
  free(parent);
  if (parent_fd < 0) return errno == ENOENT ? 0 : errno;
  int result = 0;
  struct stat st;
  struct remover r = {.top_fd = -1, .dev = 0, .moved = 0, .error = 0};
  if (fstatat(parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    result = errno == ENOENT ? 0 : errno;
  } else if (!S_ISDIR(st.st_mode)) {
    result = unlinkat(parent_fd, name, 0) == 0 || errno == ENOENT ? 0 : errno;
  } else {
    r.dev = st.st_dev;
    result = ENOTEMPTY;
    for (int pass = 0; pass < REMOVE_PASSES; pass++) {
      struct stat top;
      int fd = open_directory(&r, parent_fd, name, &top);
      if (fd < 0) {
        result = errno == ENOENT ? 0 : errno;
        if (errno == ELOOP || errno == ENOTDIR)
          result = unlinkat(parent_fd, name, 0) == 0 || errno == ENOENT ? 0 : errno;
        break;
      }
      r.top_fd = dup(fd);
      r.error = 0;
      clear_directory(&r, fd, 0);
      close(r.top_fd);
      r.top_fd = -1;
      if (unlinkat(parent_fd, name, AT_REMOVEDIR) == 0 || errno == ENOENT) {
        result = 0;
        break;
      }
      result = r.error ? r.error : errno;
      if (errno != ENOTEMPTY && errno != EEXIST) break;
    }
  }
  close(parent_fd);
  return result;
}

static void run_remover(int argc, char **argv) __attribute__((noreturn));
static void run_remover(int argc, char **argv) {
  if (argc < 3) {
    fputs("usage: ux-sandbox-exec --remove PATH...\n", stderr);
    _exit(2);
  }
  int failed = 0;
  for (int i = 2; i < argc; i++) {
    int error = remove_tree(argv[i]);
    if (error != 0) {
      fprintf(stderr, "ux-sandbox-exec: could not remove %s: %s\n", argv[i], strerror(error));
      failed = 1;
    }
  }
  _exit(failed);
}

static void exec_command(char **command) __attribute__((noreturn));
static void exec_command(char **command) {
  execvp(command[0], command);
  int error = errno;
  fprintf(stderr, "ux: cannot run %s: %s\n", command[0], strerror(error));
  _exit(error == ENOENT ? 127 : 126);
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "--launch") == 0) run_launcher(argc, argv);
  if (argc >= 2 && strcmp(argv[1], "--remove") == 0) run_remover(argc, argv);
  struct options options;
  parse_options(argc, argv, &options);

  struct sock_fprog program = {0, NULL};
  if (options.seccomp_fd >= 0) read_program(options.seccomp_fd, &program);
  int supervise = options.allow_count > 0;
  if (supervise) {
    check_supervision_support();
    g_allowed = calloc(options.allow_count, sizeof *g_allowed);
    if (!g_allowed) setup_failed("out of memory");
    for (size_t i = 0; i < options.allow_count; i++) {
      g_allowed[i].path = options.allow_unix[i];
      /* Resolved now, before the command runs and can change anything it can write. */
      g_allowed[i].resolved = resolve_path(options.allow_unix[i]);
    }
    g_allowed_count = options.allow_count;
  }
  g_bridge_path = options.bridge_path;

  if (options.bridge_port == 0 && !supervise) {
    /* No helper: this process becomes the command, as it always did. */
    reset_signals();
    if (options.seccomp_fd >= 0) install_filter(&program, 0, -1);
    exec_command(options.command);
  }

  /* Not dumpable from here on (the forked command inherits it until its exec resets it): nothing of
   * the command's uid can open this process's memory or descriptors through /proc and use its
   * unfiltered sockets. Terminal signals are ignored before the fork, so no Ctrl-C falls between. */
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  ignore_signals();
  int bridge_fd = options.bridge_port ? open_bridge_listener(options.bridge_port) : -1;
  int bridge_target_fd = options.bridge_port ? pin_bridge_target(options.bridge_path) : -1;
  int control[2] = {-1, -1};
  if (supervise && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, control) != 0)
    setup_failed("cannot create a socket pair for the connect supervisor: %s", strerror(errno));
  /* How the init learns of the command's end, all set up before the fork, so that a command that ends
   * at once (`env`) cannot end unseen: SIGCHLD at its default disposition (an inherited SIG_IGN would
   * have the kernel reap the command itself, with no signal and no status: the helper waited for ever),
   * blocked (as pid 1 an unblocked SIGCHLD with no handler is discarded: the old hang, one run in
   * fifteen), and a signalfd for it. After the fork a pidfd of the command is added where the kernel
   * has one. The command gets the default dispositions and an empty mask back (reset_signals). */
  int children_fd = watch_children();
  pid_t command = fork();
  if (command < 0) setup_failed("cannot start the command: %s", strerror(errno));
  if (command == 0) {
    if (bridge_fd >= 0) close(bridge_fd);
    if (bridge_target_fd >= 0) close(bridge_target_fd);
    if (control[0] >= 0) close(control[0]);
    reset_signals();
    if (options.seccomp_fd >= 0) install_filter(&program, supervise, control[1]);
    exec_command(options.command);
  }
  if (control[1] >= 0) close(control[1]);
  free(program.filter);
  /* A second, independent wake-up for the command's own end (Linux 5.3): readable once it has ended,
   * even before it is reaped; -1 where the kernel lacks pidfd_open. */
  int command_fd = pidfd_open_(command, 0);
  run_helper(command, children_fd, command_fd, bridge_fd, bridge_target_fd, control[0], &options);
}
