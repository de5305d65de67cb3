/*
 * ux-path-guard: takes away protected names that a sandboxed command creates, keeps what it takes in a
 * sealed, bounded quarantine, and checks git repositories that sandboxed commands created.
 *
 *   ux-path-guard [--quarantine DIR] [--quarantine-max-entries N] [--quarantine-max-bytes N]
 *                 [--git-templates DIR] [--remove-on-exit DIR]...
 *
 * The host starts one guard, detached in its own session, with stdin and stdout as pipes. For every
 * sandboxed command it registers the protected names that do not exist yet (`.git`, `.codex`, …) as
 * targets: an entry NAME inside an existing directory DIR. The guard watches each DIR with inotify
 * and, the moment a target appears, moves it into the quarantine directory (or removes it when it
 * cannot be moved) and tells the host. It runs outside the host's event loop, so a stalled host does
 * not widen the window in which the entry exists. What it moves is then sealed (guard-quarantine.h).
 *
 * A chain: NAME may be a relative path of several components below DIR (`.config/git` in a home with
 * no `.config`). The guard watches the deepest directory of the path that exists; when the next
 * component appears AS A DIRECTORY it watches inside it too (and looks at once at what is already
 * there: `mkdir -p` is fast), and so on until the last component, which it takes away as above.
 * Directories on the way are never taken away: they are ordinary (`.config`, `.local`). A component
 * that appears as a symbolic link on the way is taken away (it could lead the rest of the path
 * anywhere, to a directory the command filled beforehand); a file there is left (nothing can be
 * created below it; when it is replaced by a directory, that is followed). A directory on the way is
 * identified by device and inode: one renamed away (or removed) is no longer on the path and is
 * dropped, and whatever then has its name is followed again from the directory above.
 *
 * A kept link (L): a protected name that exists as a symbolic link (stow-style dotfiles, a linked
 * `.git`). The link itself is left alone; its identity (device and inode) and text are recorded when
 * the registration goes live, and anything else that later appears under its name is taken away like
 * a missing name; when the link is moved away, removed or replaced, the guard makes it again
 * (symlinkat with the recorded text, through the directory's descriptor; never over an entry that is
 * there). A link with the same text in its place is kept as it is.
 *
 * A repository target (V) is a work tree's missing `.git`: when it appears as a DIRECTORY it is left
 * in place (a sandboxed `git init` or `git clone` must work) and checked when the registration ends,
 * after the command's sandbox has ended (guard-git-check.h); as a file or a link it is taken away.
 *
 * Host -> guard: records of NUL-terminated fields, the first field being the record type:
 *   W <id> <dir> <name>   add a target to registration <id> (many W may precede one G); <name> is one
 *                         name or a relative path of names (a chain, at most MAX_CHAIN of them)
 *   V <id> <dir> <name>   the same, for a repository's git directory
 *   L <id> <dir> <name> <text>
 *                         the same, for a name that exists as a symbolic link whose text is <text>:
 *                         kept (above)
 *   G <id>                watch the targets of <id>; reply R <id>, or E <id> <message>
 *   C <id> <root> <rel> <worktree> <kind>
 *                         at the end of <id>, check the git directory <rel> (relative, no "..",
 *                         opened below <root> without following links) as a repository a command
 *                         created; <worktree> (absolute, or empty: the git directory's parent) is
 *                         where its core.worktree may point; <kind> "w": a linked worktree's git
 *                         directory, whose pointers only are checked (empty: a repository's)
 *   U <id>                drain pending events, check every target of <id> once more, seal, check
 *                         the repositories of <id>, unwatch; reply D <id> after every notice of <id>
 * Guard -> host, same framing:
 *   R <id>                          the registration is live
 *   E <id> <message>                it could not be set up (and was dropped)
 *   D <id>                          the registration ended
 *   Q <id> <path> <moved-to>        <path> appeared and was moved to <moved-to> (sealed); said once
 *                                   per path and registration, however often the path reappears
 *   X <id> <path> <empty>           <path> appeared and was removed (also once)
 *   F <id> <path> <error>           <path> appeared and could not be taken away: it is still there
 *                                   (or, for a repository, it could not be checked)
 *   S <id> <path> <staged>          what was moved from <path> could not be sealed (something kept
 *                                   writing into it): it stays at <staged> until a command ends
 *   K <id> <gitdir> <moved-to> <what> <config-replaced>
 *                                   a new repository's surface held <what>, not git's own: moved to
 *                                   <moved-to> (empty: removed); <config-replaced> is "1" when its
 *                                   config was replaced by git's own lines
 *   B <id> <path> <error>           the kept link <path> was moved away, removed or replaced: it was
 *                                   made again (<error> empty), or could not be (said once each)
 *   P <id> <entries> <bytes> <max-entries> <max-bytes>
 *                                   to stay within its bounds, the quarantine removed that many of its
 *                                   oldest entries while this registration was live (said once, at U)
 *
 * End of stdin (the host ended or died): with no live registration, the --remove-on-exit directories
 * are removed and the guard exits at once; otherwise it keeps handling events for one second (the
 * host's sandboxes are being killed at the same moment), checks every target once more, removes the
 * --remove-on-exit directories and exits. Terminal signals are ignored: a Ctrl-C that kills the host
 * must not kill the guard first.
 *
 * Every operation on a watched entry goes through the directory's O_PATH descriptor (*at calls), never
 * its path, and removal never follows a symbolic link.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/*
 * Every watch is added with IN_MASK_ADD: one directory may be watched for several targets, and a kept
 * link's directory also for departures (KEEP_MASK); a later plain add would drop those bits.
 */
#define WATCH_MASK (IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_MASK_ADD)
#define KEEP_MASK (IN_DELETE | IN_MOVED_FROM)
#define MAX_DEPTH 256
/* Components of a chain target, at most. */
#define MAX_CHAIN 32
#define LINGER_MS 1000
/*
 * When what was taken is sealed: at the first wake of the guard (an event, a record of the host) from
 * SEAL_GRACE_MS after the take on, when a registration ends, and at the latest SEAL_DEADLINE_MS after
 * the take. The grace keeps what a command was still writing into a file as it created it
 * (`echo x > .codex`); anything written through a descriptor after the seal is not kept. The guard
 * wakes on a timer only for the deadline: on this VM a process that last woke from its own timer was
 * woken 5 to 10 times later by the next event (1.5-3 ms instead of 0.3 ms), and that is the window.
 */
#define SEAL_GRACE_MS 50
#define SEAL_DEADLINE_MS 2000
/* Notices beyond this much unread output are dropped (replies never are): a command that creates a
 * protected name in a loop must not make the guard block on a full pipe or grow without bound. */
#define MAX_PENDING_OUTPUT (8u << 20)

struct watch {
  int wd; /* -1 once the directory went away or the watch was removed */
  int dirfd;
  int refs;
  dev_t dev; /* the directory's identity, as opened */
  ino_t ino;
  struct watch *next;
};

/*
 * A name that exists as a symbolic link, kept (see the top): one record per directory and name,
 * shared by every registration that keeps it, so the first one's record holds while any is live.
 */
struct keep {
  struct watch *watch; /* the link's directory (the targets hold its references) */
  char *name;
  char *text;  /* the link's text, as the plan saw it */
  int present; /* the recorded link is there: dev and ino are its identity */
  dev_t dev;
  ino_t ino;
  int refs;
  struct keep *next;
};

struct target {
  char *dir;
  char *name; /* one name, or a relative path of names (a chain) */
  char *path; /* dir + "/" + name, as reported */
  char **comps;       /* the names of NAME */
  char **way_paths;   /* way_paths[i]: dir + "/" + comps[0..i] (the last is PATH) */
  size_t ncomp;
  struct watch **levels; /* levels[0]: DIR; levels[i]: the directory comps[i-1] inside levels[i-1] */
  size_t depth;          /* levels held; the last name is watched when depth == ncomp */
  int *way_reported;     /* per component on the way: the host heard it was taken (a link there) */
  int *way_failed;
  struct keep *keep;  /* a kept link (L) */
  char *link_text;    /* its text, as the plan saw it */
  int repository; /* a work tree's git directory: a directory there is checked, not taken */
  int new_repo;   /* it appeared as a directory while this registration was live */
  int reported;   /* the host heard of it (Q or X) */
  int failure_reported;
  int restore_reported; /* kept: the host heard the link was made again (or could not be) */
};

/* The directory watched for the last name of T, while the chain reaches it. */
static struct watch *final_watch(const struct target *t) {
  return t->depth == t->ncomp ? t->levels[t->ncomp - 1] : NULL;
}
static const char *final_name(const struct target *t) { return t->comps[t->ncomp - 1]; }

struct check_request {
  char *root, *rel, *worktree;
  int linked; /* a linked worktree's git directory: only its pointers */
  struct check_request *next;
};

struct reg {
  char *id;
  int live;
  char *error; /* a W record was invalid: G replies E with this */
  struct target *targets;
  size_t count, cap;
  struct check_request *checks;
  unsigned long evicted; /* quarantine entries removed by the bound while this was live */
  unsigned long long evicted_bytes;
  struct reg *next;
};

static struct watch *watches;
static struct keep *keeps;
static struct reg *regs;
static int inotify_fd = -1;
static int inotify_errno;
static char **remove_on_exit;
static size_t remove_on_exit_count;
static unsigned long counter;
static long self_pid;

static char *out_buf;
static size_t out_len, out_off, out_cap;
static int out_dead;

static char *in_buf;
static size_t in_len, in_cap;

/* ---------------------------------------------------------------------------------------------- */

static void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) _exit(70);
  return q;
}

static char *xstrdup(const char *s) {
  char *d = strdup(s);
  if (!d) _exit(70);
  return d;
}

static char *join_path(const char *dir, const char *name) {
  size_t a = strlen(dir), b = strlen(name);
  int slash = a == 0 || dir[a - 1] != '/';
  char *p = xrealloc(NULL, a + slash + b + 1);
  memcpy(p, dir, a);
  if (slash) p[a] = '/';
  memcpy(p + a + slash, name, b + 1);
  return p;
}

/* An absolute form of a path given on the command line, without trailing slashes. */
static char *absolute(const char *path) {
  char *result;
  if (path[0] == '/') {
    result = xstrdup(path);
  } else {
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return NULL;
    result = join_path(cwd, path);
  }
  size_t n = strlen(result);
  while (n > 1 && result[n - 1] == '/') result[--n] = '\0';
  return result;
}

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---------------------------------------------------------------------------------------------- */
/* Output to the host: queued, written without blocking. */

static void out_flush(void) {
  while (!out_dead && out_off < out_len) {
    ssize_t n = write(STDOUT_FILENO, out_buf + out_off, out_len - out_off);
    if (n > 0) {
      out_off += (size_t)n;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      break;
    } else {
      out_dead = 1; /* the host is gone; keep working, say nothing more */
    }
  }
  if (out_dead || out_off == out_len) {
    out_off = out_len = 0;
  } else if (out_off > (1u << 16)) {
    memmove(out_buf, out_buf + out_off, out_len - out_off);
    out_len -= out_off;
    out_off = 0;
  }
}

/* Queues one record: the fields (NULL-terminated list), each followed by a NUL. */
static void emit(int droppable, const char *first, ...) {
  if (out_dead) return;
  if (droppable && out_len - out_off > MAX_PENDING_OUTPUT) return;
  va_list ap;
  va_start(ap, first);
  for (const char *field = first; field; field = va_arg(ap, const char *)) {
    size_t n = strlen(field) + 1;
    if (out_len + n > out_cap) {
      out_cap = (out_len + n) * 2;
      out_buf = xrealloc(out_buf, out_cap);
    }
    memcpy(out_buf + out_len, field, n);
    out_len += n;
  }
  va_end(ap);
  out_flush();
}

/* ---------------------------------------------------------------------------------------------- */
/* Taking an entry away. */

/* Gives the owner rwx on the directory NAME in PARENTFD, without following a symlink. */
static void make_dir_writable(int parentfd, const char *name) {
  int fd = openat(parentfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  char proc[64];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  struct stat st;
  if (fstat(fd, &st) == 0) (void)chmod(proc, (st.st_mode & 07777) | 0700);
  close(fd);
}

/* Gives the owner rwx on the open directory FD (a removal needs the write bit; root does not). */
static void make_fd_writable(int fd) {
  struct stat st;
  if (fstat(fd, &st) == 0 && (st.st_mode & 0700) != 0700) (void)fchmod(fd, (st.st_mode & 07777) | 0700);
}

/*
 * Removes NAME in PARENTFD: a directory recursively, never following a symlink (each level is opened
 * O_NOFOLLOW relative to its parent's descriptor). A directory's mode is changed only where an unlink
 * in it is refused (a guard running as root never needs to, so a sealed, read-only directory stays
 * read-only to its writers while it is emptied). Returns 1 when removed, 0 when it was not there,
 * -1 with errno set when it is (at least partly) still there.
 */
static int remove_entry(int parentfd, const char *name, int depth) {
  struct stat st;
  if (fstatat(parentfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) return errno == ENOENT ? 0 : -1;
  if (!S_ISDIR(st.st_mode)) {
    if (unlinkat(parentfd, name, 0) == 0) return 1;
    if (errno == ENOENT) return 0;
    if (errno != EISDIR) return -1;
    /* Replaced by a directory meanwhile: remove that. */
  }
  if (depth >= MAX_DEPTH) {
    errno = ENOTEMPTY;
    return -1;
  }
  int saved = 0;
  for (int pass = 0; pass < 8; pass++) {
    int fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      if (errno == ENOENT) return 0;
      if (errno == ENOTDIR || errno == ELOOP) { /* replaced by a file or symlink meanwhile */
        if (unlinkat(parentfd, name, 0) == 0) return 1;
        return errno == ENOENT ? 0 : -1;
      }
      if (errno == EACCES && pass == 0) {
        make_dir_writable(parentfd, name);
        continue;
      }
      return -1;
    }
    DIR *dir = fdopendir(fd);
    if (!dir) {
      int e = errno;
      close(fd);
      errno = e;
      return -1;
    }
    int failed = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
      if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
      int removed = remove_entry(dirfd(dir), entry->d_name, depth + 1);
      if (removed < 0 && (errno == EACCES || errno == EPERM)) {
        make_fd_writable(dirfd(dir));
        removed = remove_entry(dirfd(dir), entry->d_name, depth + 1);
      }
      if (removed < 0) {
        failed = 1;
        saved = errno;
      }
    }
    closedir(dir);
    if (unlinkat(parentfd, name, AT_REMOVEDIR) == 0) return 1;
    if (errno == ENOENT) return 0;
    if (errno != ENOTEMPTY && errno != EEXIST) return -1;
    if (failed) {
      errno = saved;
      return -1;
    }
    /* Something was added while we removed: another pass. */
  }
  errno = saved ? saved : ENOTEMPTY;
  return -1;
}

static int rename_noreplace(int olddirfd, const char *oldname, int newdirfd, const char *newname) {
#ifdef SYS_renameat2
  if (syscall(SYS_renameat2, olddirfd, oldname, newdirfd, newname, RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return -1;
#endif
  return renameat(olddirfd, oldname, newdirfd, newname);
}

struct text {
  char *data;
  size_t len, cap;
};

static void text_put(struct text *t, char c) {
  if (t->len + 1 >= t->cap) {
    t->cap = (t->len + 1) * 2 + 64;
    t->data = xrealloc(t->data, t->cap);
  }
  t->data[t->len++] = c;
}

/* Appends S with backslash, tab and newline escaped, so one entry stays one line. */
static void text_escaped(struct text *t, const char *s) {
  for (; *s; s++) {
    if (*s == '\\' || *s == '\t' || *s == '\n') {
      text_put(t, '\\');
      text_put(t, *s == '\\' ? '\\' : *s == '\t' ? 't' : 'n');
    } else {
      text_put(t, *s);
    }
  }
}

static void drain_inotify(void);

#include "guard-quarantine.h"
#include "guard-git-check.h"

enum outcome_kind { GONE, STAGED, REMOVED, FAILED };

struct outcome {
  enum outcome_kind kind;
  char staged[NAME_MAX + 1]; /* STAGED: the staging name in the quarantine */
  char error[256];
};

/*
 * Moves NAME in DIRFD into the quarantine under a staging name (sealed later, see seal_job), else
 * removes it. Only renames happen here: this is the window.
 */
static void take_away(int dirfd, const char *name, struct outcome *out) {
  out->kind = GONE;
  out->staged[0] = '\0';
  out->error[0] = '\0';
  struct stat st;
  int is_dir = 0;
  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
    if (errno == ENOENT) return;
  } else {
    is_dir = S_ISDIR(st.st_mode);
  }

  int made_writable = 0, reopened = 0;
  for (int attempt = 0; attempt < 6; attempt++) {
    int qfd = open_quarantine();
    if (qfd < 0) break;
    unique_name(INCOMING_PREFIX, name, out->staged);
    if (rename_noreplace(dirfd, name, qfd, out->staged) == 0) {
      out->kind = STAGED;
      if (is_dir) {
        /* Until it is sealed, a process inside it gets EACCES (the copy then sees what was taken). */
        int fd = openat(qfd, out->staged, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd >= 0) {
          (void)fchmod(fd, 0500);
          close(fd);
        }
      }
      return;
    }
    int e = errno;
    if (e == EEXIST) continue; /* an old entry has that name: take the next counter */
    if ((e == EACCES || e == EPERM) && is_dir && !made_writable) {
      /* Moving a directory rewrites its "..": it must be writable. */
      make_dir_writable(dirfd, name);
      made_writable = 1;
      continue;
    }
    if (e == ENOENT) {
      if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT) return;
      /* The quarantine directory went away: make it again, once. */
      close_quarantine();
      if (!reopened) {
        reopened = 1;
        continue;
      }
    }
    break; /* EXDEV (another file system), EBUSY (a mount point), …: remove it instead */
  }

  int removed = remove_entry(dirfd, name, 0);
  if (removed == 1) {
    out->kind = REMOVED;
  } else if (removed < 0) {
    int e = errno;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT) {
      out->kind = REMOVED;
    } else {
      out->kind = FAILED;
      snprintf(out->error, sizeof out->error, "%s", strerror(e));
    }
  }
}

/*
 * An entry staged in the quarantine, to be sealed: copied into its entry and its original removed.
 * Sealing waits until no event is pending (the window of other targets comes first), and is done
 * before a registration that heard of it ends.
 */
struct party {
  struct reg *reg;
  const char *path; /* as reported (the target's, or a component's on its way) */
  int *reported;    /* the registration heard of it */
  int *failure_reported;
  int tell; /* the first time this registration hears of this path */
};

struct seal_job {
  long long due_ms;      /* sealed at the first wake from then on, or when a registration ends */
  long long deadline_ms; /* at the latest */
  char staged[NAME_MAX + 1];
  char final[NAME_MAX + 1];
  char *path;
  struct party *parties;
  size_t party_count;
  struct seal_job *next;
};

static struct seal_job *jobs_head;
static struct seal_job **jobs_tail = &jobs_head;
static size_t jobs_pending;
static int sealing;
/* Staged entries waiting for their seal beyond which they are sealed at once, grace or not. */
#define MAX_STAGED 256

static void drain_inotify(void);

/* Attributes quarantine entries the bound removed to the registrations of a job or a check. */
static void charge_bound(struct party *parties, size_t count, struct reg *one, const char *keep) {
  unsigned long long bytes;
  unsigned long removed = enforce_bound(keep, &bytes);
  if (!removed) return;
  if (one) {
    one->evicted += removed;
    one->evicted_bytes += bytes;
  }
  for (size_t i = 0; i < count; i++) {
    parties[i].reg->evicted += removed;
    parties[i].reg->evicted_bytes += bytes;
  }
}

static void seal_one(struct seal_job *job) {
  int qfd = open_quarantine();
  int sealed = 0, unsealed = 0;
  const char *note = "";
  if (qfd >= 0) {
    struct copy_budget budget = {quarantine_max_bytes, COPY_MAX_NODES, 0, 0, 0, 1};
    copy_tree(qfd, job->staged, qfd, job->final, &budget, 0);
    drain_inotify(); /* between the steps of a seal, the events that came: they are the window */
    struct stat st;
    sealed = fstatat(qfd, job->final, &st, AT_SYMLINK_NOFOLLOW) == 0;
    note = copy_note(&budget);
    if (seal_remove(qfd, job->staged) < 0) {
      unsealed = 1;
      keep_unsealed(job->staged);
    }
    log_line(qfd, job->path, sealed ? job->final : job->staged,
             unsealed ? "not sealed: something kept writing into it" : note);
  }
  char *moved_to = join_path(quarantine_path, job->final);
  char *staged_at = join_path(quarantine_path, job->staged);
  for (size_t i = 0; i < job->party_count; i++) {
    struct party *p = &job->parties[i];
    if (p->tell && sealed) emit(1, "Q", p->reg->id, p->path, moved_to, NULL);
    else if (p->tell && !unsealed) emit(1, "X", p->reg->id, p->path, "", NULL); /* copy failed: gone */
    if (unsealed && !*p->failure_reported) {
      *p->failure_reported = 1;
      emit(1, "S", p->reg->id, p->path, staged_at, NULL);
    }
  }
  free(staged_at);
  free(moved_to);
  drain_inotify();
  if (sealed) charge_bound(job->parties, job->party_count, NULL, job->final);
}

/*
 * Seals the staged entries that are due (ALL: every one); between two, the events that came meanwhile
 * are handled first.
 */
static void run_seals(int all) {
  if (sealing) return;
  sealing = 1;
  while (jobs_head && (all || jobs_pending > MAX_STAGED || jobs_head->due_ms <= now_ms())) {
    drain_inotify(); /* takes (renames) only: new jobs are queued, none run inside (see its limit) */
    struct seal_job *job = jobs_head;
    jobs_head = job->next;
    if (!jobs_head) jobs_tail = &jobs_head;
    jobs_pending--;
    seal_one(job);
    free(job->path);
    free(job->parties);
    free(job);
  }
  sealing = 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* Registrations and watches. */

static struct reg *find_reg(const char *id) {
  for (struct reg *r = regs; r; r = r->next)
    if (strcmp(r->id, id) == 0) return r;
  return NULL;
}

static struct watch *find_watch(int wd) {
  if (wd < 0) return NULL;
  for (struct watch *w = watches; w; w = w->next)
    if (w->wd == wd) return w;
  return NULL;
}

/* A live watch of the directory with this identity (one inotify watch per inode). */
static struct watch *find_live_watch(dev_t dev, ino_t ino) {
  for (struct watch *w = watches; w; w = w->next)
    if (w->wd >= 0 && w->dev == dev && w->ino == ino) return w;
  return NULL;
}

static void release_watch(struct watch *w) {
  if (!w || --w->refs > 0) return;
  if (w->wd >= 0 && inotify_fd >= 0) (void)inotify_rm_watch(inotify_fd, w->wd);
  close(w->dirfd);
  for (struct watch **p = &watches; *p; p = &(*p)->next) {
    if (*p == w) {
      *p = w->next;
      break;
    }
  }
  free(w);
}

/*
 * Watches the directory open at FD (consumed) with WATCH_MASK and EXTRA; by FALLBACK's path when
 * /proc is missing. Shares the record of a directory already watched (one inotify watch per inode).
 * Returns the watch (a reference taken) or NULL with errno set.
 */
static struct watch *add_dir_watch(int fd, const char *fallback, uint32_t extra) {
  char proc[64];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  /* Through the descriptor, so the directory watched is the one opened. */
  int wd = inotify_add_watch(inotify_fd, proc, WATCH_MASK | extra);
  if (wd < 0 && errno == ENOENT && fallback) wd = inotify_add_watch(inotify_fd, fallback, WATCH_MASK | extra);
  if (wd < 0) {
    int e = errno;
    close(fd);
    errno = e;
    return NULL;
  }
  struct watch *w = find_watch(wd);
  if (w) {
    w->refs++;
    close(fd);
    return w;
  }
  struct stat st;
  if (fstat(fd, &st) < 0) memset(&st, 0, sizeof st);
  w = xrealloc(NULL, sizeof *w);
  w->wd = wd;
  w->dirfd = fd;
  w->refs = 1;
  w->dev = st.st_dev;
  w->ino = st.st_ino;
  w->next = watches;
  watches = w;
  return w;
}

static struct keep *find_keep(const struct watch *w, const char *name) {
  for (struct keep *k = keeps; k; k = k->next)
    if (k->watch == w && strcmp(k->name, name) == 0) return k;
  return NULL;
}

static void release_keep(struct keep *k) {
  if (!k || --k->refs > 0) return;
  for (struct keep **p = &keeps; *p; p = &(*p)->next) {
    if (*p == k) {
      *p = k->next;
      break;
    }
  }
  free(k->name);
  free(k->text);
  free(k);
}

static void free_target(struct target *t) {
  while (t->depth > 0) release_watch(t->levels[--t->depth]);
  release_keep(t->keep);
  for (size_t i = 0; i < t->ncomp; i++) {
    free(t->comps[i]);
    free(t->way_paths[i]);
  }
  free(t->comps);
  free(t->way_paths);
  free(t->levels);
  free(t->way_reported);
  free(t->way_failed);
  free(t->link_text);
  free(t->dir);
  free(t->name);
  free(t->path);
}

static void free_reg(struct reg *r) {
  for (struct reg **p = &regs; *p; p = &(*p)->next) {
    if (*p == r) {
      *p = r->next;
      break;
    }
  }
  for (size_t i = 0; i < r->count; i++) free_target(&r->targets[i]);
  free(r->targets);
  while (r->checks) {
    struct check_request *c = r->checks;
    r->checks = c->next;
    free(c->root);
    free(c->rel);
    free(c->worktree);
    free(c);
  }
  free(r->error);
  free(r->id);
  free(r);
}

static int any_live(void) {
  for (struct reg *r = regs; r; r = r->next)
    if (r->live) return 1;
  return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* Taking entries away: the targets themselves, and links on the way of a chain. */

struct parties {
  struct party *items;
  size_t count, cap;
};

/* Adds a party, one per registration and path: a path is told once. */
static void add_party(struct parties *ps, struct reg *r, const char *path, int *reported, int *failure_reported) {
  for (size_t i = 0; i < ps->count; i++)
    if (ps->items[i].reg == r && strcmp(ps->items[i].path, path) == 0) return;
  if (ps->count == ps->cap) {
    ps->cap = ps->cap ? ps->cap * 2 : 4;
    ps->items = xrealloc(ps->items, ps->cap * sizeof *ps->items);
  }
  ps->items[ps->count++] = (struct party){r, path, reported, failure_reported, 0};
}

/*
 * Moves NAME of W away (staged for the seal) and tells PARTIES (consumed): each hears of its path
 * once, however often it is taken.
 */
static void take_entry(struct watch *w, const char *name, struct parties *ps) {
  struct outcome outcome;
  take_away(w->dirfd, name, &outcome);
  if (outcome.kind == GONE || ps->count == 0) {
    free(ps->items);
    return;
  }
  struct seal_job *job = NULL;
  if (outcome.kind == STAGED) {
    job = xrealloc(NULL, sizeof *job);
    memset(job, 0, sizeof *job);
    job->due_ms = now_ms() + SEAL_GRACE_MS;
    job->deadline_ms = now_ms() + SEAL_DEADLINE_MS;
    memcpy(job->staged, outcome.staged, sizeof job->staged);
    unique_name("", name, job->final);
    job->path = xstrdup(ps->items[0].path);
  }
  for (size_t i = 0; i < ps->count; i++) {
    struct party *p = &ps->items[i];
    if (job) {
      p->tell = !*p->reported;
      *p->reported = 1;
    } else if (outcome.kind == REMOVED) {
      if (!*p->reported) emit(1, "X", p->reg->id, p->path, "", NULL);
      *p->reported = 1;
    } else if (!*p->failure_reported) {
      *p->failure_reported = 1;
      emit(1, "F", p->reg->id, p->path, outcome.error, NULL);
    }
  }
  if (job) {
    job->parties = ps->items;
    job->party_count = ps->count;
    *jobs_tail = job;
    jobs_tail = &job->next;
    jobs_pending++;
  } else {
    free(ps->items);
  }
}

/* Whether the entry NAME of W is the link K records, or a link with its text (kept from then on). */
static int is_kept_link(struct keep *k, struct watch *w, const char *name, const struct stat *st) {
  if (!S_ISLNK(st->st_mode)) return 0;
  if (k->present && st->st_dev == k->dev && st->st_ino == k->ino) return 1;
  size_t n = strlen(k->text);
  char *buf = xrealloc(NULL, n + 2);
  ssize_t got = readlinkat(w->dirfd, name, buf, n + 1);
  int same = got == (ssize_t)n && memcmp(buf, k->text, n) == 0;
  free(buf);
  if (!same) return 0;
  k->present = 1;
  k->dev = st->st_dev;
  k->ino = st->st_ino;
  return 1;
}

/*
 * Makes the kept link K again when nothing has its name (symlinkat never replaces an entry). Something
 * there is left to its own event, or to the last look. AFTER_TAKE: what was there was just taken, and
 * the notice of that take says the link was put back.
 */
static void restore_keep(struct keep *k, int after_take) {
  int ok = symlinkat(k->text, k->watch->dirfd, k->name) == 0;
  int e = errno;
  if (!ok && e == EEXIST) return;
  struct stat st;
  if (ok && fstatat(k->watch->dirfd, k->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
    k->present = 1;
    k->dev = st.st_dev;
    k->ino = st.st_ino;
  } else {
    k->present = 0;
  }
  for (struct reg *r = regs; r; r = r->next) {
    if (!r->live) continue;
    for (size_t i = 0; i < r->count; i++) {
      struct target *t = &r->targets[i];
      if (t->keep != k || t->restore_reported || (ok && after_take)) continue;
      t->restore_reported = 1;
      emit(1, "B", r->id, t->path, ok ? "" : strerror(e), NULL);
    }
  }
}

/*
 * NAME appeared (or may have) in the watched directory W: take it away once, tell every registration
 * whose target it is (each hears of a path once: a name made again and again is taken each time,
 * reported the first). A repository target that appeared as a directory is left for the check at the
 * end; a kept link is left alone, and made again when something else took its place.
 */
static void take_and_report(struct watch *w, const char *name) {
  if (!w || w->wd < 0) return;
  struct parties ps = {0};
  struct keep *keep = NULL;
  int repository = 0;
  for (struct reg *r = regs; r; r = r->next) {
    if (!r->live) continue;
    for (size_t i = 0; i < r->count; i++) {
      struct target *t = &r->targets[i];
      if (final_watch(t) != w || strcmp(final_name(t), name) != 0) continue;
      add_party(&ps, r, t->path, &t->reported, &t->failure_reported);
      repository |= t->repository;
      if (t->keep) keep = t->keep;
    }
  }
  if (ps.count == 0) return;
  struct stat st;
  int have = fstatat(w->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
  if (!have && errno != ENOENT) have = 1; /* cannot tell: take_away decides */
  if (keep) {
    if (have && is_kept_link(keep, w, name, &st)) {
      free(ps.items);
      return;
    }
    if (!have) {
      free(ps.items);
      restore_keep(keep, 0);
      return;
    }
  } else if (repository && have && S_ISDIR(st.st_mode)) {
    for (struct reg *r = regs; r; r = r->next) {
      if (!r->live) continue;
      for (size_t i = 0; i < r->count; i++) {
        struct target *t = &r->targets[i];
        if (final_watch(t) == w && strcmp(final_name(t), name) == 0) t->new_repo = 1;
      }
    }
    free(ps.items);
    return;
  }
  take_entry(w, name, &ps);
  if (keep) restore_keep(keep, 1);
}

/*
 * The component NAME of W on the way of chain targets is in the way (a link, or a directory the guard
 * cannot watch or look into): take it away, and tell every registration whose chain goes through it.
 */
static void take_on_the_way(struct watch *w, const char *name) {
  struct parties ps = {0};
  for (struct reg *r = regs; r; r = r->next) {
    if (!r->live) continue;
    for (size_t i = 0; i < r->count; i++) {
      struct target *t = &r->targets[i];
      for (size_t level = 0; level + 1 < t->ncomp && level < t->depth; level++)
        if (t->levels[level] == w && strcmp(t->comps[level], name) == 0)
          add_party(&ps, r, t->way_paths[level], &t->way_reported[level], &t->way_failed[level]);
    }
  }
  if (ps.count == 0) return;
  take_entry(w, name, &ps);
}

/* Whether level I (>= 1) of T is still the directory named comps[i-1] in level i-1, and watched. */
static int level_holds(const struct target *t, size_t i) {
  const struct watch *parent = t->levels[i - 1], *w = t->levels[i];
  if (w->wd < 0) return 0;
  struct stat st;
  if (fstatat(parent->dirfd, t->comps[i - 1], &st, AT_SYMLINK_NOFOLLOW) < 0) return 0;
  return S_ISDIR(st.st_mode) && st.st_dev == w->dev && st.st_ino == w->ino;
}

/* How far walk_chain acts. */
enum walk_mode {
  WALK_START, /* before the registration is live: nothing taken; a directory it cannot watch fails it */
  WALK_WAY,   /* as it goes live: what is in the way is taken, the last name not (no sweep at the start) */
  WALK_SWEEP, /* after an event, and at the last look: the last name too */
};

/*
 * Follows the chain T from its directory: drops the levels that are no longer on the path (renamed
 * away, removed, replaced), then goes down through every next component that is a directory, watching
 * it before looking inside. Past WALK_START: a link on the way is taken away (the plan saw nothing
 * there: it resolved every link that existed), so is a directory that cannot be watched or looked into
 * (the chain must not go blind); with WALK_SWEEP the last name, once reached, is checked. Returns 0, or
 * with WALK_START an errno for a directory it cannot watch.
 */
static int walk_chain(struct target *t, enum walk_mode mode) {
  int sweep = mode != WALK_START;
  if (t->keep || t->depth == 0 || t->levels[0]->wd < 0) return 0;
  size_t keep_levels = 1;
  while (keep_levels < t->depth && level_holds(t, keep_levels)) keep_levels++;
  while (t->depth > keep_levels) release_watch(t->levels[--t->depth]);
  for (int attempts = 0; t->depth < t->ncomp && attempts < 16;) {
    struct watch *parent = t->levels[t->depth - 1];
    const char *name = t->comps[t->depth - 1];
    struct stat st;
    if (fstatat(parent->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
      /* Missing: wait for it. The directory above cannot be looked into: not when it is on the way. */
      if (errno != ENOENT && sweep && t->depth >= 2) take_on_the_way(t->levels[t->depth - 2], t->comps[t->depth - 2]);
      return 0;
    }
    if (S_ISLNK(st.st_mode)) {
      if (sweep) take_on_the_way(parent, name);
      return 0;
    }
    if (!S_ISDIR(st.st_mode)) return 0; /* a file: nothing can be made below it */
    /* Another chain (or target) watches this very directory already: share its watch. */
    struct watch *known = find_live_watch(st.st_dev, st.st_ino);
    if (known) {
      known->refs++;
      t->levels[t->depth++] = known;
      continue;
    }
    int fd = openat(parent->dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      attempts++; /* replaced meanwhile: look again */
      continue;
    }
    struct watch *w = add_dir_watch(fd, NULL, 0);
    if (!w) {
      int e = errno;
      if (!sweep) return e;
      take_on_the_way(parent, name);
      return 0;
    }
    t->levels[t->depth++] = w;
    /* Renamed away before the watch was in place (no event told): drop it and look again. */
    if (!level_holds(t, t->depth - 1)) {
      release_watch(t->levels[--t->depth]);
      attempts++;
    }
  }
  if (mode == WALK_SWEEP && t->depth == t->ncomp) {
    struct watch *w = t->levels[t->ncomp - 1];
    struct stat st;
    if (fstatat(w->dirfd, final_name(t), &st, AT_SYMLINK_NOFOLLOW) == 0) take_and_report(w, final_name(t));
    else if (errno != ENOENT && t->ncomp >= 2) take_on_the_way(t->levels[t->ncomp - 2], t->comps[t->ncomp - 2]);
  }
  return 0;
}

/* NAME appeared in W: follow every chain for which it is a component on the way. */
static void follow_chains(struct watch *w, const char *name) {
  for (struct reg *r = regs; r; r = r->next) {
    if (!r->live) continue;
    for (size_t i = 0; i < r->count; i++) {
      struct target *t = &r->targets[i];
      for (size_t level = 0; level + 1 < t->ncomp && level < t->depth; level++) {
        if (t->levels[level] == w && strcmp(t->comps[level], name) == 0) {
          walk_chain(t, WALK_SWEEP);
          break;
        }
      }
    }
  }
}

/* W moved or went away: every chain that goes through it is checked from its directory again. */
static void recheck_chains_through(struct watch *w) {
  for (struct reg *r = regs; r; r = r->next) {
    if (!r->live) continue;
    for (size_t i = 0; i < r->count; i++) {
      struct target *t = &r->targets[i];
      for (size_t level = 1; level < t->depth; level++) {
        if (t->levels[level] == w) {
          walk_chain(t, WALK_SWEEP);
          break;
        }
      }
    }
  }
}

/* NAME left W: a kept link that went is made again. */
static void restore_if_kept(struct watch *w, const char *name) {
  struct keep *k = find_keep(w, name);
  if (!k) return;
  int live = 0;
  for (struct reg *r = regs; r && !live; r = r->next)
    for (size_t i = 0; r->live && i < r->count && !live; i++) live = r->targets[i].keep == k;
  struct stat st;
  if (live && fstatat(w->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT) restore_keep(k, 0);
}

/* Checks the targets of ONLY (or of every live registration), each (directory, name) once. */
static void check_targets(struct reg *only) {
  for (struct reg *r = only ? only : regs; r; r = only ? NULL : r->next) {
    if (!r->live) continue;
    for (size_t i = 0; i < r->count; i++) {
      struct target *t = &r->targets[i];
      if (t->ncomp > 1) {
        walk_chain(t, WALK_SWEEP); /* down the chain as it is now, and its last name when reached */
        continue;
      }
      int seen = 0;
      for (struct reg *s = only ? only : regs; s && !seen; s = only ? NULL : s->next) {
        if (!s->live) continue;
        size_t end = s == r ? i : s->count;
        for (size_t j = 0; j < end && !seen; j++)
          seen = s->targets[j].ncomp == 1 && final_watch(&s->targets[j]) == final_watch(t) &&
                 strcmp(final_name(&s->targets[j]), final_name(t)) == 0;
        if (s == r) break;
      }
      if (!seen) take_and_report(final_watch(t), final_name(t));
    }
  }
}

static void handle_event(const struct inotify_event *ev) {
  if (ev->mask & IN_Q_OVERFLOW) {
    check_targets(NULL); /* events were lost: look at every target */
    return;
  }
  struct watch *w = find_watch(ev->wd);
  if (!w) return;
  w->refs++; /* held while chains through it are followed (they may drop it) */
  if ((ev->mask & (IN_CREATE | IN_MOVED_TO)) && ev->len > 0) {
    follow_chains(w, ev->name);
    take_and_report(w, ev->name);
  }
  if ((ev->mask & (IN_DELETE | IN_MOVED_FROM)) && ev->len > 0) restore_if_kept(w, ev->name);
  if (ev->mask & IN_IGNORED) {
    /* The directory went away (or its watch was removed). */
    w->wd = -1;
    recheck_chains_through(w);
  } else if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
    /*
     * A directory on a chain's way moved or went: it is dropped from each chain where it is no longer
     * on the path, and the chain followed again. The watch stays while anything holds it (a target's
     * own directory is pinned inside its sandbox; moved from elsewhere, it is followed where it went).
     */
    recheck_chains_through(w);
  }
  release_watch(w);
}

/*
 * Handles the pending events. It stops early, leaving the rest in the kernel's queue, once more than
 * MAX_STAGED taken entries wait for their seal: a command that remakes names as fast as they are taken
 * would otherwise keep this loop (and the quarantine's staging) growing; its names then stay until the
 * queue is worked down, and it cannot make them again meanwhile.
 */
static void drain_inotify(void) {
  static char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
  if (inotify_fd < 0) return;
  for (;;) {
    if (jobs_pending > MAX_STAGED) return;
    ssize_t n = read(inotify_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return; /* EAGAIN: drained */
    for (char *p = buf; p < buf + n;) {
      const struct inotify_event *ev = (const struct inotify_event *)(void *)p;
      handle_event(ev);
      p += sizeof *ev + ev->len;
    }
  }
}

/* Opens and watches the directory of T (its level 0); on failure returns a message (malloc'd). */
static char *setup_watch(struct target *t) {
  char *message = NULL;
  int fd = open(t->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    if (asprintf(&message, "cannot watch %s: %s", t->dir, strerror(errno)) < 0) _exit(70);
    return message;
  }
  struct watch *w = add_dir_watch(fd, t->dir, t->link_text ? KEEP_MASK : 0);
  if (!w) {
    int e = errno;
    const char *hint = e == ENOSPC ? " (raise fs.inotify.max_user_watches)" : "";
    if (asprintf(&message, "cannot watch %s: %s%s", t->dir, strerror(e), hint) < 0) _exit(70);
    return message;
  }
  t->levels[0] = w;
  t->depth = 1;
  return NULL;
}

/* The registration ID, made (empty) when it is new. */
static struct reg *find_or_add_reg(const char *id) {
  struct reg *r = find_reg(id);
  if (!r) {
    r = xrealloc(NULL, sizeof *r);
    memset(r, 0, sizeof *r);
    r->id = xstrdup(id);
    r->next = regs;
    regs = r;
  }
  return r;
}

static int valid_name(const char *name) {
  return name[0] != '\0' && strchr(name, '/') == NULL && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

/* A relative path of single names, none of them "." or "..". */
static int valid_relative(const char *rel) {
  if (rel[0] == '\0' || rel[0] == '/') return 0;
  char *copy = xstrdup(rel);
  int ok = 1;
  size_t n = strlen(rel);
  if (rel[n - 1] == '/' || strstr(rel, "//")) ok = 0;
  for (char *c = strtok(copy, "/"); c && ok; c = strtok(NULL, "/")) ok = valid_name(c);
  free(copy);
  return ok;
}

/* LINK: the text of a kept link (L), else NULL. */
static void on_add(const char *id, const char *dir, const char *name, int repository, const char *link) {
  struct reg *r = find_or_add_reg(id);
  if (r->live) return; /* targets are added before G only */
  size_t ncomp = 1;
  for (const char *c = name; *c; c++) ncomp += *c == '/';
  int ok = dir[0] == '/' && valid_relative(name) && ncomp <= MAX_CHAIN && (!link || (ncomp == 1 && link[0]));
  if (!ok) {
    if (!r->error &&
        asprintf(&r->error,
                 "cannot watch %s in %s: not an absolute directory and a relative path of at most %d names "
                 "(one for a kept link)",
                 name, dir, MAX_CHAIN) < 0)
      _exit(70);
    return;
  }
  if (r->count == r->cap) {
    r->cap = r->cap ? r->cap * 2 : 8;
    r->targets = xrealloc(r->targets, r->cap * sizeof *r->targets);
  }
  struct target *t = &r->targets[r->count++];
  memset(t, 0, sizeof *t);
  t->dir = xstrdup(dir);
  t->name = xstrdup(name);
  t->path = join_path(dir, name);
  t->repository = repository;
  t->link_text = link ? xstrdup(link) : NULL;
  t->ncomp = ncomp;
  t->comps = xrealloc(NULL, ncomp * sizeof *t->comps);
  t->way_paths = xrealloc(NULL, ncomp * sizeof *t->way_paths);
  t->levels = xrealloc(NULL, ncomp * sizeof *t->levels);
  t->way_reported = xrealloc(NULL, ncomp * sizeof *t->way_reported);
  t->way_failed = xrealloc(NULL, ncomp * sizeof *t->way_failed);
  memset(t->way_reported, 0, ncomp * sizeof *t->way_reported);
  memset(t->way_failed, 0, ncomp * sizeof *t->way_failed);
  char *copy = xstrdup(name);
  size_t i = 0;
  const char *above = dir;
  for (char *c = strtok(copy, "/"); c; c = strtok(NULL, "/"), i++) {
    t->comps[i] = xstrdup(c);
    t->way_paths[i] = join_path(above, c);
    above = t->way_paths[i];
  }
  free(copy);
}

/*
 * The kept link of T (its directory watched): joins the record another live registration holds, or
 * records the link now. Returns 1 when what is there is not the link the plan saw (missing, or another
 * entry): it is taken away and the link made again once the registration is live.
 */
static int setup_keep(struct target *t) {
  struct watch *w = t->levels[0];
  struct keep *k = find_keep(w, t->comps[0]);
  if (k) {
    k->refs++;
    t->keep = k;
    return !k->present;
  }
  k = xrealloc(NULL, sizeof *k);
  memset(k, 0, sizeof *k);
  k->watch = w;
  k->name = xstrdup(t->comps[0]);
  k->text = xstrdup(t->link_text);
  k->refs = 1;
  k->next = keeps;
  keeps = k;
  t->keep = k;
  struct stat st;
  if (fstatat(w->dirfd, k->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && is_kept_link(k, w, k->name, &st)) return 0;
  return 1;
}

static void on_go(const char *id) {
  struct reg *r = find_or_add_reg(id);
  if (r->live) {
    emit(0, "E", id, "registration already live", NULL);
    return;
  }
  char *message = r->error ? xstrdup(r->error) : NULL;
  if (!message && inotify_fd < 0 && r->count > 0) {
    const char *hint = inotify_errno == EMFILE ? " (raise fs.inotify.max_user_instances)" : "";
    if (asprintf(&message, "cannot watch %s: inotify is unavailable: %s%s", r->targets[0].dir, strerror(inotify_errno),
                 hint) < 0)
      _exit(70);
  }
  for (size_t i = 0; i < r->count && !message; i++) message = setup_watch(&r->targets[i]);
  /* Down each chain as far as its directories exist now (nothing taken: no sweep at registration). */
  for (size_t i = 0; i < r->count && !message; i++) {
    struct target *t = &r->targets[i];
    int e = t->ncomp > 1 ? walk_chain(t, WALK_START) : 0;
    if (e) {
      const char *hint = e == ENOSPC ? " (raise fs.inotify.max_user_watches)" : "";
      if (asprintf(&message, "cannot watch the directories on the way to %s: %s%s", t->path, strerror(e), hint) < 0)
        _exit(70);
    }
  }
  if (message) {
    char *rid = xstrdup(id);
    free_reg(r);
    emit(0, "E", rid, message, NULL);
    free(rid);
    free(message);
    return;
  }
  int changed = 0;
  for (size_t i = 0; i < r->count; i++)
    if (r->targets[i].link_text) changed |= setup_keep(&r->targets[i]);
  r->live = 1; /* no sweep: a name that exists now was not made by this command */
  emit(0, "R", id, NULL);
  /* A link on a chain's way appeared since the plan (which resolved every link there was): taken. */
  for (size_t i = 0; i < r->count; i++) {
    struct target *t = &r->targets[i];
    if (t->ncomp > 1 && t->depth < t->ncomp) walk_chain(t, WALK_WAY);
  }
  /* A kept link that is not what the plan saw (a sandbox changed it meanwhile): taken, made again. */
  for (size_t i = 0; changed && i < r->count; i++) {
    struct target *t = &r->targets[i];
    if (t->keep && !t->keep->present) take_and_report(t->levels[0], t->comps[0]);
  }
}

#define MAX_CHECKS 256

static void on_check(const char *id, const char *root, const char *rel, const char *worktree, const char *kind) {
  struct reg *r = find_reg(id);
  if (!r || !r->live || root[0] != '/' || !valid_relative(rel) || (worktree[0] && worktree[0] != '/')) return;
  size_t count = 0;
  for (struct check_request *c = r->checks; c; c = c->next) count++;
  if (count >= MAX_CHECKS) return;
  struct check_request *c = xrealloc(NULL, sizeof *c);
  c->root = xstrdup(root);
  c->rel = xstrdup(rel);
  c->worktree = xstrdup(worktree);
  c->linked = strcmp(kind, "w") == 0;
  c->next = NULL;
  struct check_request **tail = &r->checks;
  while (*tail) tail = &(*tail)->next;
  *tail = c; /* checked in the order they came */
}

/* Opens REL below ROOT as a directory, no component followed if it is a symbolic link. */
static int open_below(const char *root, const char *rel) {
  int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -1;
  char *copy = xstrdup(rel);
  char *save = NULL;
  char *c = strtok_r(copy, "/", &save);
  while (c && fd >= 0) {
    char *next_name = strtok_r(NULL, "/", &save);
    int flags = next_name ? O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
                          : O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
    int next = openat(fd, c, flags);
    close(fd);
    fd = next;
    c = next_name;
  }
  free(copy);
  return fd;
}

struct dir_id {
  dev_t dev;
  ino_t ino;
};

/*
 * Checks the git directory GFD (PATH, in the work tree WORKTREE) as a repository a command created,
 * once per directory (SEEN); reports to R what it had to take. Closes GFD.
 */
static void check_one(struct reg *r, int gfd, const char *path, const char *worktree, const char *label, int linked,
                      struct dir_id *seen, size_t *seen_count) {
  struct stat st;
  if (fstat(gfd, &st) < 0 || !S_ISDIR(st.st_mode)) {
    close(gfd);
    return;
  }
  for (size_t i = 0; i < *seen_count; i++) {
    if (seen[i].dev == st.st_dev && seen[i].ino == st.st_ino) {
      close(gfd);
      return;
    }
  }
  if (*seen_count < MAX_CHECKS + 64) seen[(*seen_count)++] = (struct dir_id){st.st_dev, st.st_ino};
  struct repo_check rc;
  memset(&rc, 0, sizeof rc);
  rc.label = label;
  rc.worktree = worktree;
  rc.gitdir_abs = path;
  rc.prefix = "";
  rc.budget = (struct copy_budget){quarantine_max_bytes, COPY_MAX_NODES, 0, 0, 0, 0};
  if (linked) check_linked_gitdir(&rc, gfd, "");
  else check_gitdir(&rc, gfd, "", 0);
  close(gfd);
  if (rc.items == 0 && !rc.failed) {
    free(rc.what.data);
    return;
  }
  text_put(&rc.what, '\0');
  char *moved_to = rc.entry_made && quarantine_path ? join_path(quarantine_path, rc.entry) : xstrdup("");
  int qfd = rc.entry_made ? open_quarantine() : -1;
  if (qfd >= 0) log_line(qfd, path, rc.entry, rc.what.data);
  emit(1, "K", r->id, path, moved_to, rc.what.data, rc.config_replaced ? "1" : "", NULL);
  if (rc.failed) emit(1, "F", r->id, path, rc.error, NULL);
  free(moved_to);
  if (rc.entry_made) charge_bound(NULL, 0, r, rc.entry);
  free(rc.what.data);
}

/* The repositories R's command created: its targets that appeared as directories, and the C requests. */
static void check_repositories(struct reg *r) {
  struct dir_id seen[MAX_CHECKS + 64];
  size_t seen_count = 0;
  for (size_t i = 0; i < r->count; i++) {
    struct target *t = &r->targets[i];
    struct watch *w = final_watch(t);
    if (!t->repository || !t->new_repo || !w) continue;
    int gfd = openat(w->dirfd, final_name(t), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (gfd < 0) continue;
    /* Its work tree: the directory the chain reached (the target's own for a single name). */
    char *worktree = xstrdup(t->path);
    char *slash = strrchr(worktree, '/');
    if (slash == worktree) slash[1] = '\0';
    else if (slash) *slash = '\0';
    check_one(r, gfd, t->path, worktree, final_name(t), 0, seen, &seen_count);
    free(worktree);
  }
  for (struct check_request *c = r->checks; c; c = c->next) {
    int gfd = open_below(c->root, c->rel);
    int open_errno = errno;
    char *path = join_path(c->root, c->rel);
    if (gfd < 0) {
      /* Gone is fine; anything else (a link on the way, no access) leaves it unchecked: say so. */
      if (open_errno != ENOENT) {
        char message[256];
        snprintf(message, sizeof message,
                 "ux could not check it (%s: a component of its path is not a directory, or a link)",
                 strerror(open_errno));
        emit(1, "F", r->id, path, message, NULL);
      }
      free(path);
      continue;
    }
    char *worktree = c->worktree[0] ? xstrdup(c->worktree) : xstrdup(path);
    char *slash = strrchr(worktree, '/');
    if (!c->worktree[0] && slash) {
      if (slash == worktree) slash[1] = '\0';
      else *slash = '\0';
    }
    const char *label = strrchr(c->rel, '/') ? strrchr(c->rel, '/') + 1 : c->rel;
    check_one(r, gfd, path, worktree, label, c->linked, seen, &seen_count);
    free(path);
    free(worktree);
  }
}

static void on_end(const char *id) {
  struct reg *r = find_reg(id);
  if (r && r->live) {
    drain_inotify();  /* every event up to now, for every registration */
    check_targets(r); /* and what an event may not have told */
    run_seals(1);     /* what was taken is sealed before the host hears the end */
    retry_unsealed();
    check_repositories(r);
    if (r->evicted) {
      char entries[32], bytes[32], max_entries[32], max_bytes[32];
      snprintf(entries, sizeof entries, "%lu", r->evicted);
      snprintf(bytes, sizeof bytes, "%llu", r->evicted_bytes);
      snprintf(max_entries, sizeof max_entries, "%lu", quarantine_max_entries);
      snprintf(max_bytes, sizeof max_bytes, "%llu", quarantine_max_bytes);
      emit(1, "P", id, entries, bytes, max_entries, max_bytes, NULL);
    }
  }
  if (r) free_reg(r);
  emit(0, "D", id, NULL);
}

/* Handles every complete record at the start of the input buffer; keeps an incomplete one. */
static void handle_input(void) {
  size_t pos = 0;
  for (;;) {
    const char *fields[6];
    size_t count = 0, need = 1, p = pos;
    char type = '?';
    while (count < need) {
      char *nul = memchr(in_buf + p, '\0', in_len - p);
      if (!nul) goto incomplete;
      fields[count++] = in_buf + p;
      p = (size_t)(nul - in_buf) + 1;
      if (count == 1 && fields[0][0] != '\0' && fields[0][1] == '\0') {
        type = fields[0][0];
        need = type == 'W' || type == 'V' ? 4 : type == 'L' ? 5 : type == 'C' ? 6 : type == 'G' || type == 'U' ? 2 : 1;
      }
    }
    pos = p;
    if (type == 'W' || type == 'V') on_add(fields[1], fields[2], fields[3], type == 'V', NULL);
    else if (type == 'L') on_add(fields[1], fields[2], fields[3], 0, fields[4]);
    else if (type == 'G') on_go(fields[1]);
    else if (type == 'C') on_check(fields[1], fields[2], fields[3], fields[4], fields[5]);
    else if (type == 'U') on_end(fields[1]);
    /* Anything else is not ours: skipped. */
  }
incomplete:
  memmove(in_buf, in_buf + pos, in_len - pos);
  in_len -= pos;
}

/* ---------------------------------------------------------------------------------------------- */

/* Removes PATH (a host's private directory), never following a symlink below its parent. */
static void remove_path(const char *path) {
  if (strcmp(path, "/") == 0 || path[0] != '/') return;
  const char *slash = strrchr(path, '/');
  char *parent = slash == path ? xstrdup("/") : strndup(path, (size_t)(slash - path));
  if (!parent) _exit(70);
  int fd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    (void)remove_entry(fd, slash + 1, 0);
    close(fd);
  }
  free(parent);
}

static void finish(void) {
  if (any_live()) {
    drain_inotify();
    check_targets(NULL);
    run_seals(1);
    /* The host is gone, its sandboxes with it: check what they made before anyone's git reads it. */
    for (struct reg *r = regs; r; r = r->next)
      if (r->live) check_repositories(r);
  }
  run_seals(1);
  retry_unsealed();
  out_flush();
  for (size_t i = 0; i < remove_on_exit_count; i++) remove_path(remove_on_exit[i]);
  _exit(0);
}

static void usage(void) {
  fputs("usage: ux-path-guard [--quarantine DIR] [--quarantine-max-entries N] [--quarantine-max-bytes N]\n"
        "                     [--git-templates DIR] [--remove-on-exit DIR]...\n",
        stderr);
  exit(2);
}

static unsigned long long number(const char *text) {
  char *end;
  errno = 0;
  unsigned long long value = strtoull(text, &end, 10);
  if (errno || *end || end == text || value == 0) usage();
  return value;
}

int main(int argc, char **argv) {
  struct sigaction ignore;
  memset(&ignore, 0, sizeof ignore);
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  const int ignored[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
  for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++) (void)sigaction(ignored[i], &ignore, NULL);

  remove_on_exit = xrealloc(NULL, (size_t)argc * sizeof *remove_on_exit);
  for (int i = 1; i < argc; i++) {
    if (i + 1 >= argc) usage();
    if (strcmp(argv[i], "--quarantine-max-entries") == 0) {
      quarantine_max_entries = (unsigned long)number(argv[++i]);
      continue;
    }
    if (strcmp(argv[i], "--quarantine-max-bytes") == 0) {
      quarantine_max_bytes = number(argv[++i]);
      continue;
    }
    char *value = absolute(argv[i + 1]);
    if (!value) usage();
    if (strcmp(argv[i], "--git-templates") == 0) {
      char *hooks = join_path(value, "hooks");
      if (git_templates_fd >= 0) close(git_templates_fd);
      git_templates_fd = open(hooks, O_PATH | O_DIRECTORY | O_CLOEXEC);
      free(hooks);
      free(value);
    } else if (strcmp(argv[i], "--quarantine") == 0) {
      free(quarantine_path);
      quarantine_path = value;
    } else if (strcmp(argv[i], "--remove-on-exit") == 0) {
      remove_on_exit[remove_on_exit_count++] = value;
    } else {
      usage();
    }
    i++;
  }
  prepare_quarantine();
  if (chdir("/") != 0) {
    /* Only to not keep the host's directory busy. */
  }

  self_pid = (long)getpid();
  inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (inotify_fd < 0) inotify_errno = errno;
  int flags = fcntl(STDOUT_FILENO, F_GETFL);
  if (flags >= 0) (void)fcntl(STDOUT_FILENO, F_SETFL, flags | O_NONBLOCK);

  int stdin_open = 1;
  long long linger_deadline = 0;
  for (;;) {
    struct pollfd fds[3];
    nfds_t n = 0;
    int in_i = -1, ino_i = -1, out_i = -1;
    if (stdin_open) {
      fds[n] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
      in_i = (int)n++;
    }
    if (inotify_fd >= 0) {
      fds[n] = (struct pollfd){.fd = inotify_fd, .events = POLLIN};
      ino_i = (int)n++;
    }
    if (!out_dead && out_len > out_off) {
      fds[n] = (struct pollfd){.fd = STDOUT_FILENO, .events = POLLOUT};
      out_i = (int)n++;
    }
    int timeout = -1;
    if (!stdin_open) {
      long long left = linger_deadline - now_ms();
      if (left <= 0) finish();
      timeout = (int)left;
    }
    if (jobs_head) {
      long long due = jobs_pending > MAX_STAGED ? 0 : jobs_head->deadline_ms - now_ms();
      if (due < 0) due = 0;
      if (timeout < 0 || due < timeout) timeout = (int)due;
    }
    if (poll(fds, n, timeout) < 0) continue; /* EINTR */
    /* Events first: they are what the window is made of. */
    if (ino_i >= 0 && fds[ino_i].revents) drain_inotify();
    if (out_i >= 0 && fds[out_i].revents) out_flush();
    if (jobs_head) run_seals(0); /* after the events: sealing is not the window */
    if (in_i >= 0 && fds[in_i].revents) {
      if (in_cap - in_len < 65536) {
        in_cap = in_len + 65536 * 2;
        in_buf = xrealloc(in_buf, in_cap);
      }
      ssize_t got = read(STDIN_FILENO, in_buf + in_len, in_cap - in_len);
      if (got > 0) {
        in_len += (size_t)got;
        handle_input();
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        /* The host ended or died. */
        stdin_open = 0;
        close(STDIN_FILENO);
        if (!any_live()) finish();
        linger_deadline = now_ms() + LINGER_MS;
      }
    }
  }
}
