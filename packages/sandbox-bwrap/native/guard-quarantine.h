/*
 * ux-path-guard, part 2 of 3 (included once by ux-path-guard.c): the quarantine.
 *
 * What the guard takes away is first renamed into the quarantine under a staging name
 * (".incoming-<unique>"): one rename, so the name leaves the workspace at once. The rename keeps the
 * inode, though, and a process whose working directory (or an open descriptor) is inside what moved
 * could go on writing into it, in the quarantine. So the guard then SEALS it: it copies what is there,
 * through descriptors, into a fresh entry (regular files and directories; symbolic links recreated as
 * links, never followed; anything else left out; bounded in bytes, entries and depth), and removes the
 * staged original through descriptors. A directory that is removed is dead: the kernel refuses to
 * create anything in it (ENOENT), even for a process whose working directory it still is. The sealed
 * entry is made of new inodes that no sandbox ever had a reference to (the quarantine is masked in
 * every sandbox), so nothing in the quarantine stays writable from a sandbox.
 *
 * Before the copy reads a staged directory it sets its mode to 0500: a process that writes into it
 * then gets EACCES, so the copy sees a still picture and the removal is not raced by ordinary writes
 * (a guard running as root never needs the write bit back; otherwise it gives itself the bit only
 * where an unlink is refused). A process of the same user that sets the mode back in a tight loop can
 * still race the removal; the guard then keeps the staged original (".incoming-*", not an entry),
 * says so, and removes it when a command ends or the guard exits.
 *
 * The quarantine is bounded: at most `quarantine_max_entries` entries and `quarantine_max_bytes` bytes
 * of file content. After each new entry the oldest entries (by name: the names start with the time)
 * are removed until both bounds hold; the host hears of it once per registration (P record).
 */

#define QUARANTINE_DEFAULT_MAX_ENTRIES 64ul
#define QUARANTINE_DEFAULT_MAX_BYTES (64ull << 20)
/* Per entry: how many files, directories and links are copied, and how deep. */
#define COPY_MAX_NODES 4096u
#define COPY_MAX_DEPTH 64
/* How many times the removal of a staged original is tried before it is kept for later. */
#define SEAL_REMOVE_ATTEMPTS 64
/* quarantine.log is rotated (to quarantine.log.1) beyond this size. */
#define LOG_MAX_BYTES (1u << 20)
#define INCOMING_PREFIX ".incoming-"
#define LOG_NAME "quarantine.log"
#define LOG_OLD_NAME "quarantine.log.1"

static char *quarantine_path;
static int quarantine_fd = -1;
static int quarantine_base_fd = -1;
static char *quarantine_rest; /* the components below the base, "a/b/quarantine" */
static unsigned long quarantine_max_entries = QUARANTINE_DEFAULT_MAX_ENTRIES;
static unsigned long long quarantine_max_bytes = QUARANTINE_DEFAULT_MAX_BYTES;
static int quarantine_swept;

/*
 * The quarantine is made at the first need, when sandboxed commands may already have run: its missing
 * components are then created and opened one by one relative to the deepest ancestor that existed when
 * the guard started (opened then, symlinks followed: the host's own path), never following a symlink,
 * so a command cannot redirect it by creating one of those components first.
 */
static void prepare_quarantine(void) {
  if (!quarantine_path || strcmp(quarantine_path, "/") == 0) return;
  char *base = xstrdup(quarantine_path);
  for (;;) {
    char *slash = strrchr(base, '/');
    if (slash == base) slash[1] = '\0';
    else *slash = '\0';
    int fd = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
      quarantine_base_fd = fd;
      size_t skip = strlen(base);
      quarantine_rest = xstrdup(quarantine_path + skip + (base[skip - 1] == '/' ? 0 : 1));
      break;
    }
    if (errno != ENOENT || strcmp(base, "/") == 0) break; /* unusable: entries are removed instead */
  }
  free(base);
}

static void sweep_stale_incoming(int qfd);

static int open_quarantine(void) {
  if (quarantine_fd >= 0) return quarantine_fd;
  if (quarantine_base_fd < 0) return -1;
  char *rest = xstrdup(quarantine_rest);
  int fd = quarantine_base_fd;
  for (char *component = strtok(rest, "/"); component; component = strtok(NULL, "/")) {
    (void)mkdirat(fd, component, 0700);
    int next = openat(fd, component, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd != quarantine_base_fd) close(fd);
    fd = next;
    if (fd < 0) break;
  }
  free(rest);
  if (fd >= 0) {
    quarantine_fd = fd;
    if (!quarantine_swept) {
      quarantine_swept = 1;
      sweep_stale_incoming(fd);
    }
  }
  return quarantine_fd;
}

static void close_quarantine(void) {
  if (quarantine_fd >= 0) close(quarantine_fd);
  quarantine_fd = -1;
}

/* <UTC YYYYmmddTHHMMSSZ>-<pid>-<counter, 6 digits>-<name>, the name shortened to fit NAME_MAX. */
static void unique_name(const char *prefix, const char *name, char out[NAME_MAX + 1]) {
  time_t now = time(NULL);
  struct tm tm;
  char stamp[32] = "00000000T000000Z";
  if (gmtime_r(&now, &tm)) strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  int n = snprintf(out, NAME_MAX + 1, "%s%s-%ld-%06lu-", prefix, stamp, self_pid, ++counter);
  if (n < 0 || n > NAME_MAX) n = 0;
  size_t room = (size_t)(NAME_MAX - n), len = strlen(name);
  if (len > room) len = room;
  memcpy(out + n, name, len);
  out[n + len] = '\0';
}

/* Staged originals this guard left behind because it could not remove them yet. */
struct unsealed {
  char *name;
  struct unsealed *next;
};
static struct unsealed *unsealed_list;

/* Removes ".incoming-*" entries that a guard which no longer runs left behind (it was killed mid-seal). */
static void sweep_stale_incoming(int qfd) {
  int fd = openat(qfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  DIR *dir = fdopendir(fd);
  if (!dir) {
    close(fd);
    return;
  }
  char **stale = NULL;
  size_t count = 0;
  struct dirent *entry;
  while ((entry = readdir(dir)) != NULL) {
    if (strncmp(entry->d_name, INCOMING_PREFIX, strlen(INCOMING_PREFIX)) != 0) continue;
    /* .incoming-<stamp>-<pid>-…: the pid is the third field. */
    const char *dash = strchr(entry->d_name + strlen(INCOMING_PREFIX), '-');
    long pid = dash ? strtol(dash + 1, NULL, 10) : 0;
    if (pid <= 0 || pid == self_pid || (kill((pid_t)pid, 0) < 0 && errno == ESRCH)) {
      stale = xrealloc(stale, (count + 1) * sizeof *stale);
      stale[count++] = xstrdup(entry->d_name);
    }
  }
  closedir(dir);
  for (size_t i = 0; i < count; i++) {
    (void)remove_entry(qfd, stale[i], 0);
    free(stale[i]);
  }
  free(stale);
}

/* Tries once more to remove every staged original kept for later. */
static void retry_unsealed(void) {
  if (!unsealed_list) return;
  int qfd = open_quarantine();
  struct unsealed **p = &unsealed_list;
  while (*p) {
    struct unsealed *u = *p;
    if (qfd >= 0 && remove_entry(qfd, u->name, 0) < 0) {
      p = &u->next;
      continue;
    }
    *p = u->next;
    free(u->name);
    free(u);
  }
}

/*
 * <ISO time>\t<original path>\t<destination name>[\t<note>]\n in <quarantine>/quarantine.log; best
 * effort. Rotated to quarantine.log.1 when it grows past LOG_MAX_BYTES.
 */
static void log_line(int qfd, const char *path, const char *destination, const char *note) {
  struct stat st;
  if (fstatat(qfd, LOG_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_size > (off_t)LOG_MAX_BYTES)
    (void)renameat(qfd, LOG_NAME, qfd, LOG_OLD_NAME);
  int fd = openat(qfd, LOG_NAME, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
                  0600);
  if (fd < 0) return;
  char stamp[32] = "1970-01-01T00:00:00Z";
  time_t now = time(NULL);
  struct tm tm;
  if (gmtime_r(&now, &tm)) strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
  struct text line = {0};
  text_escaped(&line, stamp);
  text_put(&line, '\t');
  text_escaped(&line, path);
  text_put(&line, '\t');
  text_escaped(&line, destination);
  if (note && *note) {
    text_put(&line, '\t');
    text_escaped(&line, note);
  }
  text_put(&line, '\n');
  for (size_t off = 0; off < line.len;) {
    ssize_t n = write(fd, line.data + off, line.len - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    off += (size_t)n;
  }
  free(line.data);
  close(fd);
}

/* ---------------------------------------------------------------------------------------------- */
/* Sealing: a copy through descriptors. */

struct copy_budget {
  unsigned long long bytes; /* file content still allowed */
  unsigned nodes;           /* files, directories and links still allowed */
  unsigned long long copied;
  unsigned skipped; /* entries left out: other types, over a bound, unreadable */
  int truncated;    /* a file was cut at the byte bound */
  int drain_events; /* handle pending events now and then (sealing; never during a repository check) */
};

/* Sets the mode of NAME in PARENTFD without following a symlink (through an O_PATH descriptor). */
static int set_mode_at(int parentfd, const char *name, mode_t mode) {
  int fd = openat(parentfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  int result = -1;
  if (fstat(fd, &st) == 0 && !S_ISLNK(st.st_mode)) {
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    result = chmod(proc, mode);
  }
  close(fd);
  return result;
}

static int write_all(int fd, const char *data, size_t len) {
  for (size_t off = 0; off < len;) {
    ssize_t n = write(fd, data + off, len - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    off += (size_t)n;
  }
  return 0;
}

/*
 * Copies SNAME in SDIR to DNAME in DDIR (which must not exist): a regular file's content (at most the
 * budget's bytes), a directory recursively, a symbolic link as a link with the same target. Nothing is
 * followed: every level is opened O_NOFOLLOW relative to its parent's descriptor. Files are created
 * 0600 (never executable: a quarantined hook must be looked at before it runs again), directories 0700.
 * A source directory is set to 0500 before it is read (see the top of this file).
 */
static void copy_tree(int sdir, const char *sname, int ddir, const char *dname, struct copy_budget *b, int depth) {
  struct stat st;
  if (fstatat(sdir, sname, &st, AT_SYMLINK_NOFOLLOW) < 0) return;
  if (b->nodes == 0 || depth > COPY_MAX_DEPTH) {
    b->skipped++;
    return;
  }
  b->nodes--;
  if (S_ISDIR(st.st_mode)) {
    int s = openat(sdir, sname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (s < 0 && errno == EACCES && set_mode_at(sdir, sname, 0500) == 0)
      s = openat(sdir, sname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (s < 0) {
      b->skipped++;
      return;
    }
    (void)fchmod(s, 0500); /* writers inside get EACCES from now on */
    if (mkdirat(ddir, dname, 0700) < 0) {
      close(s);
      b->skipped++;
      return;
    }
    int d = openat(ddir, dname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *dir = d >= 0 ? fdopendir(s) : NULL;
    if (!dir) {
      close(s);
      if (d >= 0) close(d);
      b->skipped++;
      return;
    }
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
      if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
      copy_tree(dirfd(dir), entry->d_name, d, entry->d_name, b, depth + 1);
    }
    closedir(dir);
    close(d);
  } else if (S_ISREG(st.st_mode)) {
    int in = openat(sdir, sname, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (in < 0 && errno == EACCES && set_mode_at(sdir, sname, 0400) == 0)
      in = openat(sdir, sname, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat ist;
    if (in < 0 || fstat(in, &ist) < 0 || !S_ISREG(ist.st_mode)) {
      if (in >= 0) close(in);
      b->skipped++;
      return;
    }
    int out = openat(ddir, dname, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (out < 0) {
      close(in);
      b->skipped++;
      return;
    }
    static char buf[64 * 1024];
    for (;;) {
      size_t want = sizeof buf;
      if (b->bytes < want) want = (size_t)b->bytes;
      if (want == 0) {
        /* At the bound: is there more? */
        char probe;
        if (read(in, &probe, 1) > 0) b->truncated = 1;
        break;
      }
      ssize_t n = read(in, buf, want);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      if (write_all(out, buf, (size_t)n) < 0) break;
      b->bytes -= (unsigned long long)n;
      b->copied += (unsigned long long)n;
      /* A long copy lets the events that came meanwhile through: they are the window. */
      if (b->drain_events && (b->copied & ((1u << 20) - 1)) < (unsigned long long)n) drain_inotify();
    }
    close(in);
    close(out);
  } else if (S_ISLNK(st.st_mode)) {
    char target[PATH_MAX];
    ssize_t n = readlinkat(sdir, sname, target, sizeof target - 1);
    if (n < 0 || (target[n] = '\0', symlinkat(target, ddir, dname) < 0)) b->skipped++;
  } else {
    b->skipped++; /* FIFOs, sockets, devices: named in the log, never opened */
  }
}

/* A note for the log about what a copy left out, or "" (static buffer). */
static const char *copy_note(const struct copy_budget *b) {
  static char note[160];
  note[0] = '\0';
  if (b->truncated && b->skipped)
    snprintf(note, sizeof note, "sealed copy: cut at the size bound, %u entries left out", b->skipped);
  else if (b->truncated)
    snprintf(note, sizeof note, "sealed copy: cut at the size bound");
  else if (b->skipped)
    snprintf(note, sizeof note, "sealed copy: %u entries left out (not a file, directory or link, or over a bound)",
             b->skipped);
  return note;
}

/*
 * Removes the staged original NAME in PARENTFD (a directory recursively) so that ordinary writes into
 * it cannot race the removal: each directory is set to 0500 before it is listed, and removed only when
 * a listing made at 0500 found it empty (its writers cannot add to it, and removing it needs write
 * access to its parent only, which is the guard's). Where an unlink in it is refused (a guard that is
 * not root), the directory gets its write bit for the unlinks of one listing and loses it again.
 * Returns 1 when removed, 0 when it was not there, -1 when it is still there.
 */
static int seal_remove_tree(int parentfd, const char *name, int depth) {
  struct stat st;
  if (fstatat(parentfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) return errno == ENOENT ? 0 : -1;
  if (!S_ISDIR(st.st_mode)) {
    if (unlinkat(parentfd, name, 0) == 0 || errno == ENOENT) return 1;
    if (errno != EISDIR) return -1;
  }
  if (depth >= MAX_DEPTH) return -1;
  for (int pass = 0; pass < SEAL_REMOVE_ATTEMPTS; pass++) {
    int fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      if (errno == ENOENT) return 0;
      if (errno == ENOTDIR || errno == ELOOP) return unlinkat(parentfd, name, 0) == 0 || errno == ENOENT ? 1 : -1;
      if (errno == EACCES && set_mode_at(parentfd, name, 0500) == 0) continue;
      return -1;
    }
    (void)fchmod(fd, 0500);
    int copy = dup(fd);
    DIR *dir = copy >= 0 ? fdopendir(copy) : NULL;
    if (!dir) {
      if (copy >= 0) close(copy);
      close(fd);
      return -1;
    }
    char **names = NULL;
    size_t count = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
      if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
      names = xrealloc(names, (count + 1) * sizeof *names);
      names[count++] = xstrdup(entry->d_name);
    }
    closedir(dir);
    if (count == 0) {
      close(fd);
      if (unlinkat(parentfd, name, AT_REMOVEDIR) == 0) return 1;
      if (errno == ENOENT) return 0;
      if (errno == ENOTEMPTY || errno == EEXIST) continue; /* a writer that changed the mode back */
      return -1;
    }
    int opened = 0;
    for (size_t i = 0; i < count; i++) {
      int removed = seal_remove_tree(fd, names[i], depth + 1);
      if (removed < 0 && (errno == EACCES || errno == EPERM) && !opened) {
        (void)fchmod(fd, 0700); /* only for our own unlinks: back to 0500 below */
        opened = 1;
        removed = seal_remove_tree(fd, names[i], depth + 1);
      }
      free(names[i]);
    }
    free(names);
    if (opened) (void)fchmod(fd, 0500);
    close(fd);
  }
  return -1;
}

/* Removes a staged original; 0 when it is gone, -1 when something kept writing into it. */
static int seal_remove(int qfd, const char *name) { return seal_remove_tree(qfd, name, 0) < 0 ? -1 : 0; }

static void keep_unsealed(const char *name) {
  struct unsealed *u = xrealloc(NULL, sizeof *u);
  u->name = xstrdup(name);
  u->next = unsealed_list;
  unsealed_list = u;
}

/* ---------------------------------------------------------------------------------------------- */
/* The bound. */

/* The bytes of file content under NAME in DIRFD (bounded walk). */
static unsigned long long entry_bytes(int parentfd, const char *name, unsigned *nodes, int depth) {
  struct stat st;
  if (*nodes == 0 || depth > COPY_MAX_DEPTH || fstatat(parentfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) return 0;
  (*nodes)--;
  if (S_ISREG(st.st_mode)) return (unsigned long long)st.st_size;
  if (!S_ISDIR(st.st_mode)) return 0;
  int fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return 0;
  DIR *dir = fdopendir(fd);
  if (!dir) {
    close(fd);
    return 0;
  }
  unsigned long long total = 0;
  struct dirent *entry;
  while ((entry = readdir(dir)) != NULL) {
    if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
    total += entry_bytes(dirfd(dir), entry->d_name, nodes, depth + 1);
  }
  closedir(dir);
  return total;
}

struct entry_info {
  char *name;
  ino_t ino;
  unsigned long long bytes;
};

/*
 * The sizes of the entries seen at the last bound check, by name and inode: an entry is walked once,
 * not at every check (entries do not change once sealed; one that did is walked again).
 */
static struct entry_info *size_cache;
static size_t size_cache_count;

static int cached_bytes(const char *name, ino_t ino, unsigned long long *bytes) {
  for (size_t i = 0; i < size_cache_count; i++) {
    if (size_cache[i].ino == ino && strcmp(size_cache[i].name, name) == 0) {
      *bytes = size_cache[i].bytes;
      return 1;
    }
  }
  return 0;
}

static int by_name(const void *a, const void *b) {
  return strcmp(((const struct entry_info *)a)->name, ((const struct entry_info *)b)->name);
}

/*
 * Removes the oldest entries until at most quarantine_max_entries entries and quarantine_max_bytes
 * bytes remain; never KEEP (the entry just made). Returns how many were removed, and their bytes.
 */
static unsigned long enforce_bound(const char *keep, unsigned long long *removed_bytes) {
  *removed_bytes = 0;
  int qfd = open_quarantine();
  if (qfd < 0) return 0;
  int fd = openat(qfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return 0;
  DIR *dir = fdopendir(fd);
  if (!dir) {
    close(fd);
    return 0;
  }
  struct entry_info *entries = NULL;
  size_t count = 0, cap = 0;
  unsigned long long total = 0;
  struct dirent *entry;
  while ((entry = readdir(dir)) != NULL) {
    const char *n = entry->d_name;
    if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0 || strcmp(n, LOG_NAME) == 0 || strcmp(n, LOG_OLD_NAME) == 0 ||
        strncmp(n, INCOMING_PREFIX, strlen(INCOMING_PREFIX)) == 0)
      continue;
    if (count == cap) {
      cap = cap ? cap * 2 : 128;
      entries = xrealloc(entries, cap * sizeof *entries);
    }
    entries[count].name = xstrdup(n);
    entries[count].ino = entry->d_ino;
    if (!cached_bytes(n, entry->d_ino, &entries[count].bytes)) {
      unsigned nodes = COPY_MAX_NODES * 2;
      entries[count].bytes = entry_bytes(dirfd(dir), n, &nodes, 0);
    }
    total += entries[count].bytes;
    count++;
  }
  closedir(dir);
  qsort(entries, count, sizeof *entries, by_name);
  unsigned long removed = 0;
  size_t left = count;
  for (size_t i = 0; i < count && (left > quarantine_max_entries || total > quarantine_max_bytes); i++) {
    if (keep && strcmp(entries[i].name, keep) == 0) continue;
    if (remove_entry(qfd, entries[i].name, 0) < 0) continue;
    left--;
    total -= entries[i].bytes;
    *removed_bytes += entries[i].bytes;
    removed++;
    log_line(qfd, "(quarantine bound)", entries[i].name, "removed: the quarantine keeps only the newest entries");
    free(entries[i].name);
    entries[i].name = NULL;
  }
  /* What is left is the cache for the next check (removed entries' names freed). */
  for (size_t i = 0; i < size_cache_count; i++) free(size_cache[i].name);
  free(size_cache);
  size_cache = NULL;
  size_cache_count = 0;
  for (size_t i = 0; i < count; i++) {
    if (!entries[i].name) continue;
    entries[size_cache_count++] = entries[i];
  }
  size_cache = entries;
  return removed;
}
