/*
 * ux-spawn-helper: the last step between the ux host and a command.
 *
 *   ux-spawn-helper <host-pid> -- <program> <argv0> [args...]
 *
 * 1. Dies with the host (when <host-pid> is not 0): PR_SET_PDEATHSIG(SIGKILL) on Linux, then checks
 *    that the host is still the parent (it may have died before the request took effect).
 * 2. Closes every descriptor above stderr, so nothing the host inherited without close-on-exec
 *    reaches the command.
 * 3. Executes <program> with <argv0> as argv[0]. It never forks: the command keeps this pid, its
 *    process group and its session.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
  fprintf(stderr, "usage: ux-spawn-helper <host-pid> -- <program> <argv0> [args...]\n");
  return 127;
}

int main(int argc, char **argv) {
  if (argc < 5 || strcmp(argv[2], "--") != 0) return usage();
  pid_t host = (pid_t)strtol(argv[1], NULL, 10);
  if (host > 0) {
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    if (getppid() != host) return 128 + SIGKILL;
  }
  close_above_stderr();
  const char *program = argv[3];
  execv(program, &argv[4]);
  int error = errno;
  fprintf(stderr, "ux: cannot run %s: %s\n", program, strerror(error));
  return error == ENOENT ? 127 : 126;
}
