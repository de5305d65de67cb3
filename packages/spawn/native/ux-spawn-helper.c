/*
 * ux-spawn-helper: the last step between the ux host and a command.
 *
 *   ux-spawn-helper <host-pid> [--escalate <socket-path> <token> <fd>] -- <program> <argv0> [args...]
 *
 * 1. Dies with the host (when <host-pid> is not 0): PR_SET_PDEATHSIG(SIGKILL) on Linux, then checks
 *    that the host is still the parent (it may have died before the request took effect).
 * 2. Closes every descriptor above stderr, so nothing the host inherited without close-on-exec
 *    reaches the command.
 * 3. With --escalate (ZshFork): creates an AF_UNIX datagram socketpair, connects to the escalation
 *    broker listening at <socket-path>, sends "<token>\n" with the pair's server end attached
 *    (SCM_RIGHTS) and waits for the broker's 1-byte ack. The token is single-use. Without the ack it
 *    says why and exits 127: the command never runs without its interception. The client end is then
 *    placed at exactly <fd>, without close-on-exec, for the command's ux-execve-wrapper.
 * 4. Executes <program> with <argv0> as argv[0]. It never forks: the command keeps this pid, its
 *    process group and its session.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

static void close_above_stderr(void) {
#if defined(__linux__) && defined(SYS_close_range)
  if (syscall(SYS_close_range, 3U, ~0U, 0U) == 0) return;
#endif
  DIR *dir = opendir("/proc/self/fd");
  if (dir == NULL) dir = opendir("/dev/fd");
  if (dir != NULL) {
    int fds[4096];
    int count = 0;
    int own = dirfd(dir);
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL && count < 4096) {
      char *end = NULL;
      long fd = strtol(entry->d_name, &end, 10);
      if (end != entry->d_name && *end == '\0' && fd > 2 && fd != own) fds[count++] = (int)fd;
    }
    closedir(dir);
    for (int i = 0; i < count; i++) close(fds[i]);
    if (count < 4096) return;
  }
  long max = sysconf(_SC_OPEN_MAX);
  if (max < 0 || max > 1048576) max = 1048576;
  for (long fd = 3; fd < max; fd++) close((int)fd);
}

static int usage(void) {
  fprintf(stderr,
          "usage: ux-spawn-helper <host-pid> [--escalate <socket-path> <token> <fd>] -- <program> <argv0> "
          "[args...]\n");
  return 127;
}

#define HANDSHAKE_TIMEOUT_MS 10000

static int escalation_failed(const char *what, int error) {
  if (error) fprintf(stderr, "ux: cannot connect the command to its escalation broker: %s: %s\n", what, strerror(error));
  else fprintf(stderr, "ux: cannot connect the command to its escalation broker: %s\n", what);
  return 127;
}

/* Hands a fresh datagram socket to the broker and puts our end at `target`; 0, or an exit status. */
static int connect_escalation(const char *path, const char *token, const char *target_text) {
  char *end = NULL;
  long target = strtol(target_text, &end, 10);
  if (end == target_text || *end != '\0' || target < 3 || target > 1023)
    return escalation_failed("the descriptor number must be from 3 to 1023", 0);
  size_t token_len = strlen(token);
  if (token_len == 0 || token_len > 128 || strchr(token, '\n') != NULL)
    return escalation_failed("the token is malformed", 0);
  struct sockaddr_un address;
  memset(&address, 0, sizeof address);
  address.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof address.sun_path) return escalation_failed("the socket path is too long", 0);
  strcpy(address.sun_path, path);

  int pair[2];
  if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair) != 0)
    return escalation_failed("socketpair", errno);
  int conn = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (conn < 0) return escalation_failed("socket", errno);
  while (connect(conn, (struct sockaddr *)&address, sizeof address) != 0) {
    if (errno != EINTR) return escalation_failed(path, errno);
  }

  char line[130];
  memcpy(line, token, token_len);
  line[token_len] = '\n';
  char control[CMSG_SPACE(sizeof(int))];
  memset(control, 0, sizeof control);
  struct iovec iov = {line, token_len + 1};
  struct msghdr msg;
  memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(cmsg), &pair[1], sizeof(int));
  ssize_t sent;
  while ((sent = sendmsg(conn, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  if (sent != (ssize_t)(token_len + 1)) return escalation_failed("sending the token", sent < 0 ? errno : 0);
  close(pair[1]);

  struct pollfd wait_ack = {conn, POLLIN, 0};
  int ready;
  while ((ready = poll(&wait_ack, 1, HANDSHAKE_TIMEOUT_MS)) < 0 && errno == EINTR) {
  }
  if (ready == 0) return escalation_failed("the broker did not answer", 0);
  char ack = 0;
  ssize_t got;
  while ((got = recv(conn, &ack, 1, 0)) < 0 && errno == EINTR) {
  }
  if (got != 1) return escalation_failed("the broker refused the token (unknown or already used)", 0);
  close(conn);

  if (pair[0] == (int)target) {
    if (fcntl(pair[0], F_SETFD, 0) != 0) return escalation_failed("fcntl", errno);
  } else {
    /* dup2 leaves the new descriptor without close-on-exec; the original end closes at exec. */
    if (dup2(pair[0], (int)target) < 0) return escalation_failed("dup2", errno);
  }
  return 0;
}

int main(int argc, char **argv) {
  const char *escalate_path = NULL, *escalate_token = NULL, *escalate_fd = NULL;
  if (argc >= 7 && strcmp(argv[2], "--escalate") == 0) {
    escalate_path = argv[3];
    escalate_token = argv[4];
    escalate_fd = argv[5];
    /* Drop the four option words: the rest reads as the plain form. */
    argv[5] = argv[1];
    argv += 4;
    argc -= 4;
  }
  if (argc < 5 || strcmp(argv[2], "--") != 0) return usage();
  pid_t host = (pid_t)strtol(argv[1], NULL, 10);
  if (host > 0) {
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    if (getppid() != host) return 128 + SIGKILL;
  }
  close_above_stderr();
  if (escalate_path != NULL) {
    int status = connect_escalation(escalate_path, escalate_token, escalate_fd);
    if (status != 0) return status;
  }
  const char *program = argv[3];
  execv(program, &argv[4]);
  int error = errno;
  fprintf(stderr, "ux: cannot run %s: %s\n", program, strerror(error));
  return error == ENOENT ? 127 : 126;
}
