/*
 * ux-sandbox-exec: runs inside the sandbox, before the command.
 *
 *   ux-sandbox-exec <program> [args...]
 *
 * The host makes bubblewrap ignore SIGINT, SIGQUIT, SIGTERM and SIGHUP, so that a Ctrl-C sent to the
 * whole process group does not kill the sandbox wrapper before it can clean up. Ignored dispositions
 * survive exec, and a POSIX shell cannot un-ignore a signal that was ignored when it started, so this
 * program gives the command what it would have had without the sandbox: every signal at its default
 * disposition and an empty signal mask. Then it execs the program (argv[0] of the command is exactly
 * <program>). Exit status 127 when the program is not found, 126 when it cannot be run.
 *
 * glibc refuses to change the two signals it reserves for itself (SIGCANCEL and SIGSETXID, 32 and 33
 * on Linux), and a host may have them ignored (libuv resets only signals 1 to 31 for its children):
 * those are reset with the system call directly. Nothing here uses them before the exec.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void reset_reserved(int sig) {
#ifdef SYS_rt_sigaction
  /* SIG_DFL, no flags, no restorer, an empty mask: all zeros, whatever the kernel's layout. */
  unsigned long zero[16] = {0};
  (void)syscall(SYS_rt_sigaction, sig, zero, NULL, (size_t)((NSIG - 1) / 8));
#else
  (void)sig;
#endif
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fputs("usage: ux-sandbox-exec <program> [args...]\n", stderr);
    return 127;
  }
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
  execvp(argv[1], &argv[1]);
  int error = errno;
  fprintf(stderr, "ux: cannot run %s: %s\n", argv[1], strerror(error));
  return error == ENOENT ? 127 : 126;
}
