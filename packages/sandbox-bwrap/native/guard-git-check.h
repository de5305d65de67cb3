/*
 * ux-path-guard, part 3 of 3 (included once by ux-path-guard.c): checking a git repository that a
 * sandboxed command created, once its sandbox has ended.
 *
 * A new repository's configuration surface must hold only what git itself writes for `git init` and
 * `git clone`:
 *   - config: only keys git writes itself (core.repositoryformatversion, filemode, bare,
 *     logallrefupdates, ignorecase, precomposeunicode, symlinks, sharedrepository, sparsecheckout[cone],
 *     extensions.objectformat and partialclone, remote.<name>.url/fetch/mirror/promisor/
 *     partialclonefilter/tagopt, branch.<name>.remote/merge, receive.denynonfastforwards,
 *     submodule.<name>.url/active, submodule.active, core.worktree pointing inside the work tree),
 *     git-lfs's lfs.repositoryformatversion and lfs.<url>.access, and the two data keys user.name and
 *     user.email, each in exactly the form git's own writer uses (a tab, "key = value", values quoted
 *     and escaped as git does). Values are checked too (booleans are true or false, a URL is no
 *     `<transport>::` helper and does not start with '-', …). Anything git's writer would not produce
 *     (comments, includes, continuation lines, odd spacing) counts as foreign.
 *   - hooks/: only `*.sample` regular files, equal to the ones in git's template directory when the
 *     guard was told where that is (--git-templates).
 *   - no commondir, gitdir, config.worktree or info/attributes (git never writes them there).
 *   - worktrees/<x>: commondir is "../..", gitdir a regular file, no config.worktree.
 *   - modules/<name>: each submodule's git directory is checked the same way.
 * Whatever else is in that surface is moved into ONE quarantine entry for the repository (its paths
 * kept: `<entry>/config`, `<entry>/hooks/pre-commit`) and sealed like every entry; a config that held
 * foreign keys is replaced, through descriptors (O_CREAT|O_EXCL|O_NOFOLLOW), by the lines of it that
 * were git's own (or, when it was not in git's form at all, git's own minimal config). One K record
 * tells the host.
 */

#define CONFIG_MAX_BYTES (64u * 1024u)
#define HOOK_MAX_BYTES (1u << 20)
#define DIR_MAX_ENTRIES 512
#define MODULES_MAX_DEPTH 8
#define WHAT_MAX 1000

static const char MINIMAL_CONFIG[] = "[core]\n"
                                     "\trepositoryformatversion = 0\n"
                                     "\tfilemode = true\n"
                                     "\tbare = false\n"
                                     "\tlogallrefupdates = true\n";

static int git_templates_fd = -1; /* <templates>/hooks, O_PATH */

struct repo_check {
  const char *label;      /* the git directory's name, for the entry's name */
  const char *worktree;   /* the work tree the repository belongs to (absolute), for core.worktree */
  const char *gitdir_abs; /* the git directory's absolute path */
  const char *prefix;     /* the git directory being read, inside it ("" or "modules/sub/") */
  char entry[NAME_MAX + 1];
  int entry_made;
  int removed_instead; /* there is no usable quarantine: taken items were removed */
  int config_replaced;
  int failed;
  char error[200];
  struct copy_budget budget;
  struct text what;
  unsigned items;
};

static void what_add(struct repo_check *rc, const char *item, const char *detail) {
  if (rc->what.len > WHAT_MAX) return;
  if (rc->items++) {
    text_put(&rc->what, ',');
    text_put(&rc->what, ' ');
  }
  if (rc->what.len > WHAT_MAX) {
    for (const char *s = "…"; *s; s++) text_put(&rc->what, *s);
    return;
  }
  for (const char *s = item; *s; s++) text_put(&rc->what, *s);
  if (detail && *detail) {
    text_put(&rc->what, ' ');
    text_put(&rc->what, '(');
    for (const char *s = detail; *s; s++) text_put(&rc->what, *s);
    text_put(&rc->what, ')');
  }
}

/* OUT = A + B + C (C may be NULL), cut to fit PATH_MAX: a path inside the git directory, for messages. */
static void rel3(char out[PATH_MAX], const char *a, const char *b, const char *c) {
  size_t o = 0;
  const char *parts[3] = {a, b, c};
  for (int i = 0; i < 3; i++) {
    if (!parts[i]) continue;
    size_t n = strlen(parts[i]);
    if (n > PATH_MAX - 1 - o) n = PATH_MAX - 1 - o;
    memcpy(out + o, parts[i], n);
    o += n;
  }
  out[o] = '\0';
}

/* Opens (making it) the directory REL ("a/b", may be "") inside the repository's quarantine entry. */
static int entry_subdir(struct repo_check *rc, int qfd, const char *rel) {
  if (!rc->entry_made) {
    unique_name("", rc->label, rc->entry);
    if (mkdirat(qfd, rc->entry, 0700) < 0) return -1;
    rc->entry_made = 1;
  }
  int fd = openat(qfd, rc->entry, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  char *copy = xstrdup(rel);
  for (char *c = strtok(copy, "/"); c && fd >= 0; c = strtok(NULL, "/")) {
    (void)mkdirat(fd, c, 0700);
    int next = openat(fd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    close(fd);
    fd = next;
  }
  free(copy);
  return fd;
}

/*
 * Takes NAME in PARENTFD (REL is its path inside the git directory, "hooks/pre-commit") into the
 * repository's quarantine entry: staged by a rename, copied, the staged original removed; where it
 * cannot be moved (another file system, no quarantine), copied from its place and removed there.
 * Returns 1 when it is gone from the repository.
 */
static int take_item(struct repo_check *rc, int parentfd, const char *name, const char *rel, const char *detail) {
  struct stat st;
  if (fstatat(parentfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) return errno == ENOENT;
  int qfd = open_quarantine();
  int gone = 0;
  if (qfd >= 0) {
    char *rel_dir = xstrdup(rel);
    char *slash = strrchr(rel_dir, '/');
    if (slash) *slash = '\0';
    else rel_dir[0] = '\0';
    int dest = entry_subdir(rc, qfd, rel_dir);
    free(rel_dir);
    if (dest >= 0) {
      char staged[NAME_MAX + 1];
      unique_name(INCOMING_PREFIX, name, staged);
      if (S_ISDIR(st.st_mode)) make_dir_writable(parentfd, name); /* a moved directory's ".." changes */
      if (rename_noreplace(parentfd, name, qfd, staged) == 0) {
        copy_tree(qfd, staged, dest, name, &rc->budget, 0);
        if (seal_remove(qfd, staged) < 0) keep_unsealed(staged);
        gone = 1;
      } else if (errno == ENOENT) {
        gone = 1;
      } else {
        copy_tree(parentfd, name, dest, name, &rc->budget, 0);
        gone = remove_entry(parentfd, name, 0) >= 0;
      }
      close(dest);
    }
  }
  if (!gone && (qfd < 0 || !rc->entry_made)) {
    gone = remove_entry(parentfd, name, 0) >= 0;
    if (gone) rc->removed_instead = 1;
  }
  if (!gone && !rc->failed) {
    rc->failed = 1;
    snprintf(rc->error, sizeof rc->error, "%.100s: %s", rel, strerror(errno ? errno : EIO));
  }
  what_add(rc, rel, detail);
  return gone;
}

/* ---------------------------------------------------------------------------------------------- */
/* config */

struct config_scan {
  int git_form;    /* every line is in the form git's writer produces */
  int has_version; /* a core.repositoryformatversion line was kept */
  struct text kept;
  struct text foreign; /* "core.fsmonitor, alias.st" (at most 8 named) */
  unsigned foreign_count;
};

static int is_bool(const char *v) { return strcmp(v, "true") == 0 || strcmp(v, "false") == 0; }

static int only_chars(const char *v, const char *extra, size_t max) {
  size_t n = strlen(v);
  if (n == 0 || n > max) return 0;
  for (const char *s = v; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || strchr(extra, *s)))
      return 0;
  return 1;
}

static int printable(const char *v, size_t max) {
  size_t n = strlen(v);
  if (n > max) return 0;
  for (const unsigned char *s = (const unsigned char *)v; *s; s++)
    if (*s < 0x20 || *s == 0x7f) return 0;
  return 1;
}

static int name_ok(const char *v) { return v[0] != '-' && only_chars(v, "._/-", 255); }

/* A URL git fetches from: no `<transport>::<address>` remote helper, no leading '-'. */
static int url_ok(const char *v) {
  if (!printable(v, 4096) || v[0] == '\0' || v[0] == '-') return 0;
  size_t scheme = strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-");
  return !(scheme > 0 && v[scheme] == ':' && v[scheme + 1] == ':');
}

/*
 * Whether the relative path VALUE, taken from the git directory being read (the checked git
 * directory's path plus rc->prefix), names the work tree or a directory inside it: lexically, as git
 * joins it.
 */
static int worktree_ok(const char *value, const struct repo_check *rc) {
  if (!rc->worktree || !rc->gitdir_abs || value[0] == '/' || value[0] == '\0' || !printable(value, 1024)) return 0;
  size_t cap = strlen(rc->gitdir_abs) + strlen(rc->prefix) + strlen(value) + 4;
  char *joined = xrealloc(NULL, cap);
  snprintf(joined, cap, "%s/%s/%s", rc->gitdir_abs, rc->prefix, value);
  /* Resolve "." and ".." lexically into OUT. */
  char *out = xrealloc(NULL, cap);
  size_t o = 0;
  for (char *c = strtok(joined, "/"); c; c = strtok(NULL, "/")) {
    if (strcmp(c, ".") == 0) continue;
    if (strcmp(c, "..") == 0) {
      while (o > 0 && out[o - 1] != '/') o--;
      if (o > 0) o--;
      continue;
    }
    out[o++] = '/';
    size_t n = strlen(c);
    memcpy(out + o, c, n);
    o += n;
  }
  if (o == 0) out[o++] = '/';
  out[o] = '\0';
  size_t w = strlen(rc->worktree);
  int ok = strcmp(rc->worktree, "/") == 0 ||
           (strncmp(out, rc->worktree, w) == 0 && (out[w] == '\0' || out[w] == '/'));
  free(joined);
  free(out);
  return ok;
}

/* Whether git itself writes SECTION[.SUB].KEY = VALUE in a repository it made (names compared as git does). */
static int git_writes(const char *section, int has_sub, const char *sub, const char *key, const char *value,
                      const struct repo_check *rc) {
  if (!printable(value, 4096)) return 0;
  if (strcasecmp(section, "core") == 0 && !has_sub) {
    if (strcasecmp(key, "repositoryformatversion") == 0) return strcmp(value, "0") == 0 || strcmp(value, "1") == 0;
    static const char *bools[] = {"filemode",          "bare",    "logallrefupdates", "ignorecase",
                                  "precomposeunicode", "symlinks", "sparsecheckout",  "sparsecheckoutcone"};
    for (size_t i = 0; i < sizeof bools / sizeof bools[0]; i++)
      if (strcasecmp(key, bools[i]) == 0) return is_bool(value);
    if (strcasecmp(key, "sharedrepository") == 0) return only_chars(value, "", 10);
    if (strcasecmp(key, "worktree") == 0) return worktree_ok(value, rc);
    return 0;
  }
  if (strcasecmp(section, "extensions") == 0 && !has_sub) {
    if (strcasecmp(key, "objectformat") == 0) return strcmp(value, "sha1") == 0 || strcmp(value, "sha256") == 0;
    if (strcasecmp(key, "partialclone") == 0) return name_ok(value);
    return 0;
  }
  if (strcasecmp(section, "remote") == 0 && has_sub) {
    if (strcasecmp(key, "url") == 0) return url_ok(value);
    if (strcasecmp(key, "fetch") == 0) return only_chars(value, "/+*:_.-", 1024);
    if (strcasecmp(key, "mirror") == 0 || strcasecmp(key, "promisor") == 0) return is_bool(value);
    if (strcasecmp(key, "partialclonefilter") == 0) return only_chars(value, ":=+._-", 255);
    if (strcasecmp(key, "tagopt") == 0) return strcmp(value, "--no-tags") == 0 || strcmp(value, "--tags") == 0;
    return 0;
  }
  if (strcasecmp(section, "branch") == 0 && has_sub) {
    if (strcasecmp(key, "remote") == 0) return strcmp(value, ".") == 0 || name_ok(value);
    if (strcasecmp(key, "merge") == 0) return strncmp(value, "refs/", 5) == 0 && only_chars(value, "/_.+-", 1024);
    return 0;
  }
  if (strcasecmp(section, "receive") == 0 && !has_sub)
    return strcasecmp(key, "denynonfastforwards") == 0 && is_bool(value);
  if (strcasecmp(section, "submodule") == 0 && has_sub) {
    if (strcasecmp(key, "url") == 0) return url_ok(value);
    if (strcasecmp(key, "active") == 0) return is_bool(value);
    return 0;
  }
  /* `git clone --recurse-submodules`: a pathspec of the submodules to activate. */
  if (strcasecmp(section, "submodule") == 0 && !has_sub) return strcasecmp(key, "active") == 0;
  /* git-lfs writes these into every repository it touches; neither names a program. */
  if (strcasecmp(section, "lfs") == 0 && !has_sub)
    return strcasecmp(key, "repositoryformatversion") == 0 && strcmp(value, "0") == 0;
  if (strcasecmp(section, "lfs") == 0 && has_sub)
    return strcasecmp(key, "access") == 0 &&
           (strcmp(value, "basic") == 0 || strcmp(value, "none") == 0 || strcmp(value, "negotiate") == 0);
  /* Data only: git puts these in commits and never runs or passes them to a program. */
  if (strcasecmp(section, "user") == 0 && !has_sub)
    return (strcasecmp(key, "name") == 0 || strcasecmp(key, "email") == 0) && printable(value, 256);
  (void)sub;
  return 0;
}

/* `[name]` or `[name "sub"]` (sub with \" and \\ escapes), exactly; 1 when it is one. */
static int parse_header(const char *line, size_t n, char *section, size_t section_cap, char *sub, size_t sub_cap,
                        int *has_sub) {
  size_t i = 1, s = 0;
  while (i < n && ((line[i] >= 'a' && line[i] <= 'z') || (line[i] >= 'A' && line[i] <= 'Z') ||
                   (line[i] >= '0' && line[i] <= '9') || line[i] == '-')) {
    if (s + 1 >= section_cap) return 0;
    section[s++] = line[i++];
  }
  section[s] = '\0';
  if (s == 0 || i >= n) return 0;
  *has_sub = 0;
  if (line[i] == ']') return i + 1 == n;
  if (line[i] != ' ' || i + 1 >= n || line[i + 1] != '"') return 0;
  i += 2;
  size_t u = 0;
  for (;;) {
    if (i >= n) return 0;
    char c = line[i++];
    if (c == '"') break;
    if (c == '\\') {
      if (i >= n || (line[i] != '"' && line[i] != '\\')) return 0;
      c = line[i++];
    } else if ((unsigned char)c < 0x20 || c == 0x7f) {
      return 0;
    }
    if (u + 1 >= sub_cap) return 0;
    sub[u++] = c;
  }
  sub[u] = '\0';
  *has_sub = 1;
  return i + 1 == n && line[i] == ']';
}

/* A value as git's writer leaves it: quoted parts, \\ \" \n \t \b escapes, no comment characters. */
static int decode_value(const char *raw, size_t n, char *out, size_t cap) {
  if (n > 0 && (raw[0] == ' ' || raw[n - 1] == ' ')) return 0; /* git quotes such values */
  int quoted = 0;
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    char c = raw[i];
    if (c == '"') {
      quoted = !quoted;
      continue;
    }
    if (c == '\\') {
      if (++i >= n) return 0;
      switch (raw[i]) {
        case 'n': c = '\n'; break;
        case 't': c = '\t'; break;
        case 'b': c = '\b'; break;
        case '"': c = '"'; break;
        case '\\': c = '\\'; break;
        default: return 0;
      }
    } else if ((!quoted && (c == ';' || c == '#')) || (unsigned char)c < 0x20 || c == 0x7f) {
      return 0;
    }
    if (o + 1 >= cap) return 0;
    out[o++] = c;
  }
  out[o] = '\0';
  return !quoted;
}

static void scan_config(const char *data, size_t len, const struct repo_check *rc, struct config_scan *scan) {
  memset(scan, 0, sizeof *scan);
  scan->git_form = memchr(data, '\0', len) == NULL;
  char section[64] = "", sub[256] = "", key[64], value[4097];
  int in_section = 0, has_sub = 0;
  for (size_t pos = 0; scan->git_form && pos < len;) {
    const char *line = data + pos;
    const char *nl = memchr(line, '\n', len - pos);
    size_t n = nl ? (size_t)(nl - line) : len - pos;
    pos += n + (nl ? 1 : 0);
    if (n == 0) {
      text_put(&scan->kept, '\n');
      continue;
    }
    if (line[0] == '[') {
      if (!parse_header(line, n, section, sizeof section, sub, sizeof sub, &has_sub)) {
        scan->git_form = 0;
        break;
      }
      in_section = 1;
      for (size_t i = 0; i < n; i++) text_put(&scan->kept, line[i]);
      text_put(&scan->kept, '\n');
      continue;
    }
    size_t i = 1, k = 0;
    if (line[0] != '\t' || !in_section || n < 2 ||
        !((line[1] >= 'a' && line[1] <= 'z') || (line[1] >= 'A' && line[1] <= 'Z'))) {
      scan->git_form = 0;
      break;
    }
    while (i < n && ((line[i] >= 'a' && line[i] <= 'z') || (line[i] >= 'A' && line[i] <= 'Z') ||
                     (line[i] >= '0' && line[i] <= '9') || line[i] == '-')) {
      if (k + 1 >= sizeof key) break;
      key[k++] = line[i++];
    }
    key[k] = '\0';
    if (i + 3 > n || memcmp(line + i, " = ", 3) != 0 || !decode_value(line + i + 3, n - i - 3, value, sizeof value)) {
      scan->git_form = 0;
      break;
    }
    if (git_writes(section, has_sub, sub, key, value, rc)) {
      if (strcasecmp(section, "core") == 0 && strcasecmp(key, "repositoryformatversion") == 0) scan->has_version = 1;
      for (size_t j = 0; j < n; j++) text_put(&scan->kept, line[j]);
      text_put(&scan->kept, '\n');
    } else {
      if (scan->foreign_count < 8) {
        if (scan->foreign_count) {
          text_put(&scan->foreign, ',');
          text_put(&scan->foreign, ' ');
        }
        for (const char *s = section; *s; s++) text_put(&scan->foreign, (char)tolower((unsigned char)*s));
        if (has_sub) {
          text_put(&scan->foreign, '.');
          for (const char *s = sub; *s; s++) text_put(&scan->foreign, *s);
        }
        text_put(&scan->foreign, '.');
        for (const char *s = key; *s; s++) text_put(&scan->foreign, (char)tolower((unsigned char)*s));
      } else if (scan->foreign_count == 8) {
        for (const char *s = ", …"; *s; s++) text_put(&scan->foreign, *s);
      }
      scan->foreign_count++;
    }
  }
  text_put(&scan->kept, '\0');
  text_put(&scan->foreign, '\0');
}

/* Reads at most MAX bytes of the regular file NAME in DIRFD into a malloc'd buffer; NULL otherwise. */
static char *read_small(int dirfd, const char *name, size_t max, size_t *len, int *too_big) {
  *len = 0;
  *too_big = 0;
  int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  struct stat st;
  if (fd < 0) return NULL;
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return NULL;
  }
  char *buf = xrealloc(NULL, max + 1);
  size_t got = 0;
  for (;;) {
    ssize_t n = read(fd, buf + got, max + 1 - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += (size_t)n;
    if (got > max) {
      *too_big = 1;
      break;
    }
  }
  close(fd);
  *len = got > max ? max : got;
  return buf;
}

/* Writes a new config in GFD, never over an existing name or through a link. */
static int write_config(struct repo_check *rc, int gfd, const char *rel, const char *content) {
  for (int attempt = 0; attempt < 4; attempt++) {
    int fd = openat(gfd, "config", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);
    if (fd >= 0) {
      int ok = write_all(fd, content, strlen(content)) == 0;
      close(fd);
      return ok ? 0 : -1;
    }
    if (errno != EEXIST) return -1;
    /* Something made it again in between (another command still running): take that too. */
    take_item(rc, gfd, "config", rel, "made again while ux replaced it");
  }
  return -1;
}

static void check_config(struct repo_check *rc, int gfd, const char *prefix) {
  char rel[PATH_MAX];
  rel3(rel, prefix, "config", NULL);
  struct stat st;
  if (fstatat(gfd, "config", &st, AT_SYMLINK_NOFOLLOW) < 0) return; /* none: git would not use the repository */
  struct config_scan scan;
  memset(&scan, 0, sizeof scan);
  const char *detail;
  if (!S_ISREG(st.st_mode)) {
    detail = S_ISLNK(st.st_mode) ? "a symbolic link" : "not a regular file";
  } else {
    size_t len;
    int too_big;
    char *data = read_small(gfd, "config", CONFIG_MAX_BYTES, &len, &too_big);
    if (!data) {
      detail = "unreadable";
    } else {
      if (too_big) scan.git_form = 0;
      else scan_config(data, len, rc, &scan);
      free(data);
      if (scan.git_form && scan.foreign_count == 0) {
        free(scan.kept.data);
        free(scan.foreign.data);
        return;
      }
      detail = scan.git_form ? scan.foreign.data : "not in the form git writes";
    }
  }
  int taken = take_item(rc, gfd, "config", rel, detail);
  if (taken) {
    const char *content = scan.git_form && scan.has_version ? scan.kept.data : MINIMAL_CONFIG;
    if (write_config(rc, gfd, rel, content) == 0) rc->config_replaced = 1;
    else if (!rc->failed) {
      rc->failed = 1;
      snprintf(rc->error, sizeof rc->error, "cannot write a new config: %s", strerror(errno));
    }
  }
  free(scan.kept.data);
  free(scan.foreign.data);
}

/* ---------------------------------------------------------------------------------------------- */
/* hooks and the other names */

static int by_string(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/*
 * The names in the open directory FD, read before anything in it changes; *INCOMPLETE when it has more
 * than DIR_MAX_ENTRIES or cannot be read to its end (then nothing in it can be vouched for).
 */
static char **list_names(int fd, size_t *count, int *incomplete) {
  *count = 0;
  *incomplete = 1;
  char **names = NULL;
  int copy = dup(fd);
  DIR *dir = copy >= 0 ? fdopendir(copy) : NULL;
  if (!dir) {
    if (copy >= 0) close(copy);
    return NULL;
  }
  struct dirent *entry;
  errno = 0;
  while ((entry = readdir(dir)) != NULL) {
    if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
    if (*count == DIR_MAX_ENTRIES) break; /* more than that: the caller takes the whole directory */
    names = xrealloc(names, (*count + 1) * sizeof *names);
    names[(*count)++] = xstrdup(entry->d_name);
  }
  *incomplete = entry != NULL || errno != 0;
  closedir(dir);
  if (names) qsort(names, *count, sizeof *names, by_string); /* reports list them in a stable order */
  return names;
}

static void free_names(char **names, size_t count) {
  for (size_t i = 0; i < count; i++) free(names[i]);
  free(names);
}

/* Whether the hook NAME in HFD is git's own sample of that name. */
static int is_git_sample(int hfd, const char *name) {
  size_t n = strlen(name);
  if (n <= 7 || strcmp(name + n - 7, ".sample") != 0) return 0;
  struct stat st;
  if (fstatat(hfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode)) return 0;
  if (git_templates_fd < 0) return 1; /* nothing to compare with: a sample git never runs */
  size_t a_len, b_len;
  int a_big, b_big;
  char *a = read_small(hfd, name, HOOK_MAX_BYTES, &a_len, &a_big);
  char *b = read_small(git_templates_fd, name, HOOK_MAX_BYTES, &b_len, &b_big);
  int same = a && b && !a_big && !b_big && a_len == b_len && memcmp(a, b, a_len) == 0;
  free(a);
  free(b);
  return same;
}

static void check_hooks(struct repo_check *rc, int gfd, const char *prefix) {
  char rel[PATH_MAX];
  struct stat st;
  if (fstatat(gfd, "hooks", &st, AT_SYMLINK_NOFOLLOW) < 0) return;
  if (!S_ISDIR(st.st_mode)) {
    rel3(rel, prefix, "hooks", NULL);
    take_item(rc, gfd, "hooks", rel, S_ISLNK(st.st_mode) ? "a symbolic link" : "not a directory");
    return;
  }
  int hfd = openat(gfd, "hooks", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (hfd < 0) return;
  /* Names first, then decisions: taking entries while reading the directory could skip some. */
  size_t count;
  int incomplete;
  char **names = list_names(hfd, &count, &incomplete);
  if (incomplete) {
    rel3(rel, prefix, "hooks", NULL);
    take_item(rc, gfd, "hooks", rel, "too many entries to look at");
  } else {
    for (size_t i = 0; i < count; i++) {
      if (is_git_sample(hfd, names[i])) continue;
      rel3(rel, prefix, "hooks/", names[i]);
      take_item(rc, hfd, names[i], rel, NULL);
    }
  }
  free_names(names, count);
  close(hfd);
}

/* Takes NAME in FD when it exists at all. */
static void take_if_present(struct repo_check *rc, int fd, const char *name, const char *prefix) {
  struct stat st;
  if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) return;
  char rel[PATH_MAX];
  rel3(rel, prefix, name, NULL);
  take_item(rc, fd, name, rel, NULL);
}

/*
 * A linked worktree's git directory (XFD; REL its path inside the checked git directory, ending in '/'
 * or empty): `commondir` must be the "../.." git writes (it says where the config and hooks are),
 * `gitdir` a regular file, and there must be no `config.worktree`. Git reads no hooks there.
 */
static void check_linked_gitdir(struct repo_check *rc, int xfd, const char *rel) {
  size_t len;
  int big;
  char *commondir = read_small(xfd, "commondir", 64, &len, &big);
  struct stat cst;
  int has = fstatat(xfd, "commondir", &cst, AT_SYMLINK_NOFOLLOW) == 0;
  int gits = commondir && !big &&
             ((len == 6 && memcmp(commondir, "../..\n", 6) == 0) || (len == 5 && memcmp(commondir, "../..", 5) == 0));
  if (has && !gits) {
    char item[PATH_MAX];
    rel3(item, rel, "commondir", NULL);
    take_item(rc, xfd, "commondir", item, "not the \"../..\" git writes");
  }
  free(commondir);
  struct stat gst;
  if (fstatat(xfd, "gitdir", &gst, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(gst.st_mode))
    take_if_present(rc, xfd, "gitdir", rel);
  take_if_present(rc, xfd, "config.worktree", rel);
}

static void check_worktrees(struct repo_check *rc, int gfd, const char *prefix) {
  char rel[PATH_MAX];
  struct stat st;
  if (fstatat(gfd, "worktrees", &st, AT_SYMLINK_NOFOLLOW) < 0) return;
  if (!S_ISDIR(st.st_mode)) {
    take_if_present(rc, gfd, "worktrees", prefix);
    return;
  }
  int wfd = openat(gfd, "worktrees", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (wfd < 0) return;
  /* Names first, then decisions: taking entries while reading the directory could skip some. */
  size_t count;
  int incomplete;
  char **names = list_names(wfd, &count, &incomplete);
  if (incomplete) {
    rel3(rel, prefix, "worktrees", NULL);
    take_item(rc, gfd, "worktrees", rel, "too many entries to look at");
  }
  for (size_t i = 0; i < count && !incomplete; i++) {
    rel3(rel, prefix, "worktrees/", names[i]);
    size_t rel_len = strlen(rel);
    if (rel_len < PATH_MAX - 1) memcpy(rel + rel_len, "/", 2);
    int xfd = openat(wfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (xfd < 0) {
      char item[PATH_MAX];
      rel3(item, prefix, "worktrees/", NULL);
      take_if_present(rc, wfd, names[i], item);
    } else {
      check_linked_gitdir(rc, xfd, rel);
      close(xfd);
    }
  }
  free_names(names, count);
  close(wfd);
}

static void check_gitdir(struct repo_check *rc, int gfd, const char *prefix, int depth);

/*
 * The directory NAME in PARENTFD under modules/ (PREFIX its path, ending in '/'): a submodule's git
 * directory when it has a HEAD or a config, else a level of a submodule name with slashes
 * (modules/libs/json). What cannot be looked at in full (too deep, too many entries) is taken whole.
 */
static void check_modules(struct repo_check *rc, int parentfd, const char *name, const char *prefix, int depth) {
  char rel[PATH_MAX];
  rel3(rel, prefix, name, NULL);
  struct stat st;
  if (fstatat(parentfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) return;
  if (!S_ISDIR(st.st_mode)) {
    take_item(rc, parentfd, name, rel, S_ISLNK(st.st_mode) ? "a symbolic link" : "not a directory");
    return;
  }
  if (depth > MODULES_MAX_DEPTH) {
    take_item(rc, parentfd, name, rel, "too deep to look at");
    return;
  }
  int mfd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (mfd < 0) return;
  size_t len = strlen(rel);
  if (len < PATH_MAX - 1) memcpy(rel + len, "/", 2);
  if (fstatat(mfd, "HEAD", &st, AT_SYMLINK_NOFOLLOW) == 0 || fstatat(mfd, "config", &st, AT_SYMLINK_NOFOLLOW) == 0) {
    check_gitdir(rc, mfd, rel, depth);
    close(mfd);
    return;
  }
  /* Names first, then decisions: taking entries while reading the directory could skip some. */
  size_t count;
  int incomplete;
  char **names = list_names(mfd, &count, &incomplete);
  if (incomplete) {
    rel[len] = '\0';
    take_item(rc, parentfd, name, rel, "too many entries to look at");
  } else {
    for (size_t i = 0; i < count; i++) check_modules(rc, mfd, names[i], rel, depth + 1);
  }
  free_names(names, count);
  close(mfd);
}

/* One git directory's surface (GFD open, PREFIX its path inside the checked git directory, "" at the top). */
static void check_gitdir(struct repo_check *rc, int gfd, const char *prefix, int depth) {
  const char *outer = rc->prefix;
  rc->prefix = prefix;
  check_config(rc, gfd, prefix);
  rc->prefix = outer;
  take_if_present(rc, gfd, "commondir", prefix);
  take_if_present(rc, gfd, "gitdir", prefix);
  take_if_present(rc, gfd, "config.worktree", prefix);
  struct stat st;
  char rel[PATH_MAX];
  if (fstatat(gfd, "info", &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      take_if_present(rc, gfd, "info", prefix);
    } else {
      int ifd = openat(gfd, "info", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (ifd >= 0) {
        rel3(rel, prefix, "info/", NULL);
        take_if_present(rc, ifd, "attributes", rel);
        close(ifd);
      }
    }
  }
  check_hooks(rc, gfd, prefix);
  if (depth == 0) check_worktrees(rc, gfd, prefix);
  /* modules/ holds directories only (git directories, or levels of names with slashes). */
  if (fstatat(gfd, "modules", &st, AT_SYMLINK_NOFOLLOW) == 0) {
    int mfd = S_ISDIR(st.st_mode) ? openat(gfd, "modules", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    size_t count = 0;
    int incomplete = 1;
    char **names = mfd >= 0 ? list_names(mfd, &count, &incomplete) : NULL;
    if (incomplete) {
      take_if_present(rc, gfd, "modules", prefix);
    } else {
      rel3(rel, prefix, "modules/", NULL);
      for (size_t i = 0; i < count; i++) check_modules(rc, mfd, names[i], rel, depth + 1);
    }
    free_names(names, count);
    if (mfd >= 0) close(mfd);
  }
}
