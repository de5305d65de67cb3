/*
 * ux-escalate-broker: the native half of ZshFork's escalation broker, one per door, outside any sandbox.
 *
 *   ux-escalate-broker <socket-path>
 *
 * Node starts it and keeps every decision; this process only does what Node cannot: receive
 * descriptors (SCM_RIGHTS) and start children on them. It speaks JSON lines with Node on stdin/stdout
 * (the message set is in the package README) and listens on a Unix stream socket at <socket-path>.
 *
 * - Sessions. Node registers a single-use token per command ({"op":"open"}). The spawn helper that starts
 *   the command connects to <socket-path>, sends "<token>\n" with the server end of a fresh datagram
 *   socketpair attached, and gets a 1-byte ack; an unknown or used token is refused (the connection is
 *   closed without an ack).
 * - Requests. Each 1-byte datagram on a session socket carries one end of a stream socketpair from
 *   ux-execve-wrapper; the stream brings one frame (u32 little-endian length + JSON, at most 1 MiB)
 *   describing the exec. Node gets {"type":"exec",...} and answers run, deny or escalate.
 * - Escalation. The broker answers {"action":"Escalate"}, receives the wrapper's stdio ({"fds":[...]} with
 *   the descriptors attached), opens the working directory and, when Node sent the identity its checks
 *   recorded (cwdIdentity: the directory's and each parent's device and inode up to /), compares them
 *   through that descriptor and "..": a directory that changed since is refused (126, a message on the
 *   command's stderr, "cwdChanged":true to Node). Otherwise it starts the child in that very directory
 *   (fchdir) in a process group of its own with default signal dispositions, an empty mask, exactly the
 *   argv and environment Node gave, forwards {"signal":N} frames to that group, and answers
 *   {"exit_code":N} (128+signal, with "signal") when it ends. A wrapper that goes away while its child runs (the sandbox was killed) gets the group SIGTERM,
 *   then SIGKILL 500 ms later; so does every child of a closed session, and of all sessions at stdin EOF.
 *
 * One thread, one poll() loop, non-blocking descriptors, SIGCHLD through a self-pipe. A bad message is
 * answered with {"type":"error",...} and never ends the process.
 */
#define _GNU_SOURCE
#include "ux-json.c"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

#define MAX_FRAME (1u << 20)
#define MAX_DISCARD (64u << 20)
#define MAX_LINE (64u << 20)
#define KILL_GRACE_MS 500
#define HANDSHAKE_MS 5000
#define MAX_TOKEN 128

/* ---- state ------------------------------------------------------------------------------------ */

/*
 * A session's Run cache: the exact (file, argv, workdir) of execs Node answered Run for and marked
 * cacheable (its decision read nothing but those words and the session's fixed settings and rules).
 * The same exec again is answered Run here without asking Node. Only Node fills it ("cache":true on
 * a run reply, for the request it decided); {"op":"flush"} empties every session's. Bounded: past
 * CACHE_MAX_ENTRIES or CACHE_MAX_BYTES nothing more is added (every other exec still goes to Node).
 */
#define CACHE_BUCKETS 1024
#define CACHE_MAX_ENTRIES 4096
#define CACHE_MAX_BYTES (4u << 20)
#define CACHE_MAX_KEY (64u << 10)

typedef struct cache_entry {
  uint64_t hash;
  size_t len;
  struct cache_entry *next;
  char key[];
} cache_entry;

typedef struct session {
  char *id;
  cache_entry **cache; /* CACHE_BUCKETS chains, allocated on the first entry */
  size_t cache_entries;
  size_t cache_bytes;
  unsigned long long cache_hits;
  char token[MAX_TOKEN + 1];
  int token_used;
  int dgram;   /* the server end, once the spawn helper handed it over; -1 before and after */
  int closing; /* Node closed it: waiting for its children to end */
  int dead;
  struct session *next;
} session;

enum request_state {
  READ_REQUEST,  /* reading the wrapper's request frame */
  DISCARD,       /* skipping an oversized frame, then deny */
  WAIT_DECISION, /* Node is deciding */
  WAIT_FDS,      /* answered Escalate, reading {"fds":[...]} */
  RUNNING,       /* the escalated child runs */
  FINISHING,     /* writing the last frame, then closing */
};

typedef struct request {
  long long id;
  session *owner;
  int stream; /* -1 once closed */
  int state;
  ubuf in;
  ubuf out;
  int fds[8];
  int nfds;
  unsigned long long discard_left;
  char **argv;
  char **envp;
  char *cwd;
  /*
   * The identity Node checked (cwdIdentity): the directory's (st_dev, st_ino), then each directory
   * above it up to `/`, two numbers per level; NULL when the reply named none.
   */
  unsigned long long *cwd_chain;
  size_t cwd_levels;
  /* The exec's cache key (see request_key), kept while Node decides; NULL when too big to cache. */
  char *key;
  size_t key_len;
  uint64_t key_hash;
  pid_t pid;
  long long kill_at; /* monotonic ms for SIGKILL after SIGTERM; 0 when none pending */
  int dead;
  struct request *next;
} request;

typedef struct pending {
  int fd;
  ubuf in;
  int fds[4];
  int nfds;
  long long deadline;
  int dead;
  struct pending *next;
} pending;

static session *sessions;
static request *requests;
static pending *pendings;
static long long next_request_id = 1;
static int listener = -1;
static const char *socket_path;
static int sigchld_pipe[2] = {-1, -1};
static int stdin_open = 1;
static int stop_requested;
static ubuf to_node;
static ubuf from_node;
static int discarding_line;

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the Run cache ---------------------------------------------------------------------------- */

static uint64_t hash_seed;

/* A keyed 64-bit hash (seed from getrandom): a sandboxed command cannot aim execs at one bucket. */
static uint64_t key_hash(const char *data, size_t len) {
  uint64_t h = hash_seed ^ (len * 0x9e3779b97f4a7c15ULL);
  for (size_t i = 0; i < len; i++) {
    h ^= (unsigned char)data[i];
    h *= 0x100000001b3ULL;
    h ^= h >> 29;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

static void put_u32(ubuf *b, size_t n) {
  unsigned char bytes[4] = {(unsigned char)(n & 0xff), (unsigned char)(n >> 8 & 0xff),
                            (unsigned char)(n >> 16 & 0xff), (unsigned char)(n >> 24 & 0xff)};
  ubuf_put(b, bytes, 4);
}

/*
 * The exact words Node decides on, without ambiguity: each string length-prefixed (file, workdir,
 * the argv count, each argument). The environment is not part of it: Node's Run decisions never read
 * it (a decision that would is never marked cacheable).
 */
static void request_key(ubuf *b, const jnode *root) {
  const jnode *file = json_get(root, "file");
  const jnode *workdir = json_get(root, "workdir");
  const jnode *argv = json_get(root, "argv");
  put_u32(b, file->len);
  ubuf_put(b, file->str, file->len);
  put_u32(b, workdir->len);
  ubuf_put(b, workdir->str, workdir->len);
  put_u32(b, argv->count);
  for (const jnode *item = argv->child; item; item = item->next) {
    put_u32(b, item->len);
    ubuf_put(b, item->str, item->len);
  }
}

static int cache_has(const struct session *s, const char *key, size_t len, uint64_t hash) {
  if (s->cache == NULL) return 0;
  for (const cache_entry *e = s->cache[hash % CACHE_BUCKETS]; e; e = e->next)
    if (e->hash == hash && e->len == len && memcmp(e->key, key, len) == 0) return 1;
  return 0;
}

static void cache_add(struct session *s, const char *key, size_t len, uint64_t hash) {
  if (s->cache_entries >= CACHE_MAX_ENTRIES || s->cache_bytes + len > CACHE_MAX_BYTES) return;
  if (cache_has(s, key, len, hash)) return;
  if (s->cache == NULL) {
    s->cache = calloc(CACHE_BUCKETS, sizeof *s->cache);
    if (s->cache == NULL) ujson_out_of_memory();
  }
  cache_entry *e = malloc(sizeof *e + len);
  if (e == NULL) ujson_out_of_memory();
  e->hash = hash;
  e->len = len;
  memcpy(e->key, key, len);
  e->next = s->cache[hash % CACHE_BUCKETS];
  s->cache[hash % CACHE_BUCKETS] = e;
  s->cache_entries++;
  s->cache_bytes += len;
}

static void cache_clear(struct session *s) {
  if (s->cache == NULL) return;
  for (size_t i = 0; i < CACHE_BUCKETS; i++) {
    for (cache_entry *e = s->cache[i]; e;) {
      cache_entry *next = e->next;
      free(e);
      e = next;
    }
  }
  free(s->cache);
  s->cache = NULL;
  s->cache_entries = 0;
  s->cache_bytes = 0;
}

/* ---- messages to Node ------------------------------------------------------------------------- */

static void emit_end(void) { ubuf_putc(&to_node, '\n'); }

static void emit_error(const char *message, const char *detail) {
  ubuf_puts(&to_node, "{\"type\":\"error\",\"message\":");
  if (detail) {
    ubuf text = {0};
    ubuf_puts(&text, message);
    ubuf_puts(&text, ": ");
    ubuf_puts(&text, detail);
    ubuf_json_string(&to_node, text.data, text.len);
    ubuf_free(&text);
  } else {
    ubuf_json_cstring(&to_node, message);
  }
  ubuf_putc(&to_node, '}');
  emit_end();
}

static void emit_request_event(const char *type, const request *r) {
  ubuf_puts(&to_node, "{\"type\":\"");
  ubuf_puts(&to_node, type);
  ubuf_puts(&to_node, "\",\"request\":");
  ubuf_int(&to_node, r->id);
  ubuf_putc(&to_node, '}');
  emit_end();
}

static void emit_session_event(const char *type, const char *id) {
  ubuf_puts(&to_node, "{\"type\":\"");
  ubuf_puts(&to_node, type);
  ubuf_puts(&to_node, "\",\"session\":");
  ubuf_json_cstring(&to_node, id);
  ubuf_putc(&to_node, '}');
  emit_end();
}

static void flush_to_node(void) {
  while (to_node.len > 0) {
    ssize_t written = write(1, to_node.data, to_node.len);
    if (written < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return;
      /* Node is gone: nothing left to serve. */
      fprintf(stderr, "ux-escalate-broker: stopping: cannot write to Node: %s\n", strerror(errno));
      to_node.len = 0;
      stdin_open = 0;
      stop_requested = 1;
      return;
    }
    memmove(to_node.data, to_node.data + written, to_node.len - (size_t)written);
    to_node.len -= (size_t)written;
  }
}

/* ---- helpers ---------------------------------------------------------------------------------- */

static void set_nonblocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

static void free_strings(char **list) {
  if (list == NULL) return;
  for (char **p = list; *p; p++) free(*p);
  free(list);
}

static void queue_frame(request *r, const char *json, size_t len) {
  unsigned char header[4] = {(unsigned char)(len & 0xff), (unsigned char)(len >> 8 & 0xff),
                             (unsigned char)(len >> 16 & 0xff), (unsigned char)(len >> 24 & 0xff)};
  ubuf_put(&r->out, header, 4);
  ubuf_put(&r->out, json, len);
}

/* Writes what it can of r->out; closes the stream once a FINISHING request has written everything. */
static void flush_request(request *r) {
  while (r->stream >= 0 && r->out.len > 0) {
    ssize_t sent = send(r->stream, r->out.data, r->out.len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return;
      r->out.len = 0;
      close_fd(&r->stream);
      break;
    }
    memmove(r->out.data, r->out.data + sent, r->out.len - (size_t)sent);
    r->out.len -= (size_t)sent;
  }
  if (r->state == FINISHING && r->out.len == 0) {
    close_fd(&r->stream);
    r->dead = 1;
  }
}

static void close_received_fds(request *r) {
  for (int i = 0; i < r->nfds; i++) close(r->fds[i]);
  r->nfds = 0;
}

static void deny(request *r, const char *reason) {
  ubuf frame = {0};
  ubuf_puts(&frame, "{\"action\":{\"Deny\":{\"reason\":");
  ubuf_json_cstring(&frame, reason);
  ubuf_puts(&frame, "}}}");
  queue_frame(r, frame.data, frame.len);
  ubuf_free(&frame);
  r->state = FINISHING;
  flush_request(r);
}

static void kill_group(request *r, int signal_number) {
  if (r->pid > 0) kill(-r->pid, signal_number);
}

static void terminate_child(request *r) {
  if (r->state != RUNNING || r->kill_at != 0) return;
  kill_group(r, SIGTERM);
  kill_group(r, SIGCONT);
  r->kill_at = now_ms() + KILL_GRACE_MS;
}

/* The request's wrapper is gone (or must go): end whatever it was doing. */
static void abandon(request *r) {
  close_fd(&r->stream);
  r->out.len = 0;
  close_received_fds(r);
  if (r->state == RUNNING) {
    terminate_child(r);
    return;
  }
  if (r->state == WAIT_DECISION || r->state == WAIT_FDS) emit_request_event("cancelled", r);
  r->dead = 1;
}

/* ---- the escalated child ---------------------------------------------------------------------- */

static void close_from(int lowest) {
#ifdef SYS_close_range
  if (syscall(SYS_close_range, (unsigned)lowest, ~0U, 0U) == 0) return;
#endif
  long max = sysconf(_SC_OPEN_MAX);
  if (max < 0 || max > 65536) max = 65536;
  for (long fd = lowest; fd < max; fd++) close((int)fd);
}

static void child_fail(const char *what, const char *path, int error) {
  dprintf(2, "ux: escalated command: cannot %s %s: %s\n", what, path, strerror(error));
  _exit(error == ENOENT || error == ENOTDIR ? 127 : 126);
}

static void free_request_plan(request *r) {
  free(r->key);
  r->key = NULL;
  r->key_len = 0;
  free_strings(r->argv);
  free_strings(r->envp);
  free(r->cwd);
  free(r->cwd_chain);
  r->argv = r->envp = NULL;
  r->cwd = NULL;
  r->cwd_chain = NULL;
  r->cwd_levels = 0;
}

/*
 * The escalation ends without a child: `message` (if any) on the command's stderr, `code` to the
 * wrapper and to Node (with "cwdChanged":true when the directory was not the one Node checked).
 */
static void finish_unstarted(request *r, const int targets[3], int code, int cwd_changed, const char *message) {
  if (targets[2] >= 0) dprintf(targets[2], "%s\n", message);
  ubuf frame = {0};
  ubuf_puts(&frame, "{\"exit_code\":");
  ubuf_int(&frame, code);
  ubuf_putc(&frame, '}');
  queue_frame(r, frame.data, frame.len);
  ubuf_free(&frame);
  r->state = FINISHING;
  close_received_fds(r);
  free_request_plan(r);
  ubuf_puts(&to_node, "{\"type\":\"exited\",\"request\":");
  ubuf_int(&to_node, r->id);
  ubuf_puts(&to_node, ",\"code\":");
  ubuf_int(&to_node, code);
  ubuf_puts(&to_node, ",\"signal\":null");
  if (cwd_changed) ubuf_puts(&to_node, ",\"cwdChanged\":true");
  ubuf_putc(&to_node, '}');
  emit_end();
  flush_request(r);
}

/*
 * Whether the directory `dirfd` is the one Node checked: its (st_dev, st_ino), then, through "..",
 * each directory above it, level by level up to `/` (whose ".." is itself), equal to r->cwd_chain.
 * Nothing is walked by name: a directory swapped, renamed or moved under another parent since the
 * check fails the comparison.
 */
static int same_directory_chain(int dirfd, const request *r) {
  int current = dirfd;
  int same = 1;
  for (size_t level = 0; level < r->cwd_levels && same; level++) {
    struct stat st;
    if (fstat(current, &st) != 0 || !S_ISDIR(st.st_mode) ||
        (unsigned long long)st.st_dev != r->cwd_chain[2 * level] ||
        (unsigned long long)st.st_ino != r->cwd_chain[2 * level + 1]) {
      same = 0;
      break;
    }
    if (level + 1 == r->cwd_levels) {
      /* The last level Node named is `/`: its parent must be itself (nothing above it moved in). */
      int parent = openat(current, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
      struct stat up;
      same = parent >= 0 && fstat(parent, &up) == 0 && up.st_dev == st.st_dev && up.st_ino == st.st_ino;
      if (parent >= 0) close(parent);
      break;
    }
    int parent = openat(current, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (current != dirfd) close(current);
    current = parent;
    if (current < 0) same = 0;
  }
  if (current >= 0 && current != dirfd) close(current);
  return same;
}

static void start_child(request *r, const int targets[3]) {
  /*
   * The working directory is opened here, by path as chdir would resolve it, checked against the
   * identity Node's decision recorded (when it sent one), and entered in the child through this very
   * descriptor (fchdir): what runs is in the directory that was checked, or does not run.
   */
  int dirfd = open(r->cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0) {
    int error = errno;
    ubuf message = {0};
    ubuf_puts(&message, "ux: escalated command: cannot enter ");
    ubuf_puts(&message, r->cwd);
    ubuf_puts(&message, ": ");
    ubuf_puts(&message, strerror(error));
    ubuf_putc(&message, '\0');
    finish_unstarted(r, targets, error == ENOENT || error == ENOTDIR ? 127 : 126, 0, message.data);
    ubuf_free(&message);
    return;
  }
  if (r->cwd_chain != NULL && !same_directory_chain(dirfd, r)) {
    close(dirfd);
    finish_unstarted(r, targets, 126, 1,
                     "ux: the working directory changed after it was checked; not run outside the sandbox");
    return;
  }
  /*
   * Every signal stays blocked from the fork until the child has default dispositions: a SIGTERM sent
   * to its group in between would otherwise run the broker's own handler in the child.
   */
  sigset_t all, previous;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, &previous);
  pid_t pid = fork();
  if (pid != 0) sigprocmask(SIG_SETMASK, &previous, NULL);
  if (pid < 0) {
    int error = errno;
    close(dirfd);
    ubuf message = {0};
    ubuf_puts(&message, "ux: cannot start an escalated command: ");
    ubuf_puts(&message, strerror(error));
    ubuf_putc(&message, '\0');
    finish_unstarted(r, targets, 126, 0, message.data);
    ubuf_free(&message);
    return;
  }
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    for (int s = 1; s < NSIG; s++) signal(s, SIG_DFL);
    sigset_t empty;
    sigemptyset(&empty);
    sigprocmask(SIG_SETMASK, &empty, NULL);
    /* Received descriptors and dirfd are all above 2 (the broker's own stdio is always open). */
    for (int t = 0; t < 3; t++) {
      if (targets[t] >= 0) {
        if (dup2(targets[t], t) < 0) _exit(126);
      } else {
        int null_fd = open("/dev/null", O_RDWR);
        if (null_fd < 0 || dup2(null_fd, t) < 0) _exit(126);
        if (null_fd != t) close(null_fd);
      }
    }
    if (fchdir(dirfd) != 0) child_fail("enter", r->cwd, errno);
    close_from(3);
    execve(r->argv[0], r->argv, r->envp);
    child_fail("run", r->argv[0], errno);
  }
  close(dirfd);
  setpgid(pid, pid);
  r->pid = pid;
  r->state = RUNNING;
  close_received_fds(r);
  free_request_plan(r);
  ubuf_puts(&to_node, "{\"type\":\"started\",\"request\":");
  ubuf_int(&to_node, r->id);
  ubuf_puts(&to_node, ",\"pid\":");
  ubuf_int(&to_node, pid);
  ubuf_putc(&to_node, '}');
  emit_end();
}

static void child_exited(pid_t pid, int status) {
  for (request *r = requests; r; r = r->next) {
    if (r->pid != pid || r->state != RUNNING) continue;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    int signal_number = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    ubuf frame = {0};
    ubuf_puts(&frame, "{\"exit_code\":");
    ubuf_int(&frame, code);
    if (signal_number) {
      ubuf_puts(&frame, ",\"signal\":");
      ubuf_int(&frame, signal_number);
    }
    ubuf_putc(&frame, '}');
    if (r->stream >= 0) queue_frame(r, frame.data, frame.len);
    ubuf_free(&frame);
    ubuf_puts(&to_node, "{\"type\":\"exited\",\"request\":");
    ubuf_int(&to_node, r->id);
    ubuf_puts(&to_node, ",\"code\":");
    ubuf_int(&to_node, code);
    ubuf_puts(&to_node, ",\"signal\":");
    if (signal_number) ubuf_int(&to_node, signal_number);
    else ubuf_puts(&to_node, "null");
    ubuf_putc(&to_node, '}');
    emit_end();
    r->pid = 0;
    r->kill_at = 0;
    r->state = FINISHING;
    flush_request(r);
    if (r->stream < 0) r->dead = 1;
    return;
  }
}

static void reap_children(void) {
  for (;;) {
    int status;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    child_exited(pid, status);
  }
}

/* ---- frames from the wrapper ------------------------------------------------------------------ */

static char **string_array(const jnode *array, const char **error) {
  if (array == NULL || array->type != JSON_ARRAY) {
    *error = "argv must be an array of strings";
    return NULL;
  }
  char **list = calloc(array->count + 1, sizeof(char *));
  if (list == NULL) ujson_out_of_memory();
  size_t i = 0;
  for (jnode *item = array->child; item; item = item->next) {
    const char *text = json_cstring(item);
    if (text == NULL) {
      *error = "argv must be an array of strings without NUL bytes";
      free_strings(list);
      return NULL;
    }
    list[i] = strdup(text);
    if (list[i++] == NULL) ujson_out_of_memory();
  }
  return list;
}

static char **env_array(const jnode *object, const char **error) {
  if (object == NULL || object->type != JSON_OBJECT) {
    *error = "env must be an object of strings";
    return NULL;
  }
  char **list = calloc(object->count + 1, sizeof(char *));
  if (list == NULL) ujson_out_of_memory();
  size_t i = 0;
  for (jnode *m = object->child; m; m = m->next) {
    const char *value = json_cstring(m);
    if (value == NULL || m->keynul || m->keylen == 0 || memchr(m->key, '=', m->keylen)) {
      *error = "env must map variable names (no '=', no NUL) to strings without NUL bytes";
      free_strings(list);
      return NULL;
    }
    char *entry = malloc(m->keylen + m->len + 2);
    if (entry == NULL) ujson_out_of_memory();
    memcpy(entry, m->key, m->keylen);
    entry[m->keylen] = '=';
    memcpy(entry + m->keylen + 1, value, m->len + 1);
    list[i++] = entry;
  }
  return list;
}

static int valid_exec_request(const jnode *root) {
  if (root == NULL || root->type != JSON_OBJECT) return 0;
  if (json_cstring(json_get(root, "file")) == NULL) return 0;
  if (json_cstring(json_get(root, "workdir")) == NULL) return 0;
  const jnode *argv = json_get(root, "argv");
  if (argv == NULL || argv->type != JSON_ARRAY || argv->count == 0) return 0;
  for (const jnode *item = argv->child; item; item = item->next)
    if (json_cstring(item) == NULL) return 0;
  const jnode *env = json_get(root, "env");
  if (env == NULL || env->type != JSON_OBJECT) return 0;
  for (const jnode *m = env->child; m; m = m->next)
    if (json_cstring(m) == NULL || m->keynul || m->keylen == 0) return 0;
  return 1;
}

static void forward_exec(request *r, const jnode *root) {
  const jnode *file = json_get(root, "file");
  const jnode *workdir = json_get(root, "workdir");
  ubuf_puts(&to_node, "{\"type\":\"exec\",\"session\":");
  ubuf_json_cstring(&to_node, r->owner->id);
  ubuf_puts(&to_node, ",\"request\":");
  ubuf_int(&to_node, r->id);
  ubuf_puts(&to_node, ",\"file\":");
  ubuf_json_string(&to_node, file->str, file->len);
  ubuf_puts(&to_node, ",\"argv\":[");
  for (const jnode *item = json_get(root, "argv")->child; item; item = item->next) {
    ubuf_json_string(&to_node, item->str, item->len);
    if (item->next) ubuf_putc(&to_node, ',');
  }
  ubuf_puts(&to_node, "],\"workdir\":");
  ubuf_json_string(&to_node, workdir->str, workdir->len);
  ubuf_puts(&to_node, ",\"env\":{");
  for (const jnode *m = json_get(root, "env")->child; m; m = m->next) {
    ubuf_json_string(&to_node, m->key, m->keylen);
    ubuf_putc(&to_node, ':');
    ubuf_json_string(&to_node, m->str, m->len);
    if (m->next) ubuf_putc(&to_node, ',');
  }
  ubuf_puts(&to_node, "}}");
  emit_end();
}

/* A complete frame arrived on r's stream. */
static void frame_received(request *r, const char *body, size_t len) {
  jarena arena = {0};
  const char *error = NULL;
  jnode *root = json_parse(&arena, body, len, &error);
  if (r->state == READ_REQUEST) {
    if (!valid_exec_request(root)) {
      emit_error("a wrapper sent a malformed exec request", error);
      deny(r, "the escalation broker could not read this exec request");
    } else {
      ubuf key = {0};
      request_key(&key, root);
      uint64_t hash = key_hash(key.data, key.len);
      session *s = r->owner;
      if (s != NULL && !s->closing && cache_has(s, key.data, key.len, hash)) {
        /* Node answered Run for exactly this exec in this session, and said it cannot differ. */
        static const char run[] = "{\"action\":\"Run\"}";
        s->cache_hits++;
        queue_frame(r, run, sizeof run - 1);
        r->state = FINISHING;
        ubuf_free(&key);
        flush_request(r);
      } else {
        if (key.len <= CACHE_MAX_KEY) {
          r->key = key.data;
          r->key_len = key.len;
          r->key_hash = hash;
        } else {
          ubuf_free(&key);
        }
        forward_exec(r, root);
        r->state = WAIT_DECISION;
      }
    }
  } else if (r->state == WAIT_FDS) {
    const jnode *list = json_get(root, "fds");
    int targets[3] = {-1, -1, -1};
    int ok = list && list->type == JSON_ARRAY && (int)list->count == r->nfds && r->nfds <= 3;
    int k = 0;
    for (const jnode *item = ok ? list->child : NULL; item; item = item->next, k++) {
      long long target;
      if (json_int(item, 0, 2, &target) != 0 || targets[target] >= 0) {
        ok = 0;
        break;
      }
      targets[target] = r->fds[k];
    }
    if (!ok) {
      emit_error("a wrapper sent a malformed descriptor frame", error);
      abandon(r);
    } else {
      start_child(r, targets);
    }
  } else if (r->state == RUNNING) {
    long long signal_number;
    if (json_int(json_get(root, "signal"), 1, 64, &signal_number) == 0) {
      if (signal_number == SIGINT || signal_number == SIGQUIT || signal_number == SIGTERM ||
          signal_number == SIGHUP)
        kill_group(r, (int)signal_number);
    }
  }
  jarena_free(&arena);
}

/* Reads what is available on r's stream (descriptors included) and handles complete frames. */
static void read_request(request *r) {
  char buffer[65536];
  for (;;) {
    if (r->stream < 0) return;
    char control[CMSG_SPACE(sizeof(int) * 8)];
    struct iovec iov = {buffer, sizeof buffer};
    struct msghdr msg = {0};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t got = recvmsg(r->stream, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (got < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return;
      abandon(r);
      return;
    }
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      int n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
      int *fds = (int *)CMSG_DATA(c);
      for (int i = 0; i < n; i++) {
        if (r->state == WAIT_FDS && r->nfds < 3) r->fds[r->nfds++] = fds[i];
        else close(fds[i]);
      }
    }
    if (got == 0) {
      if (r->state == FINISHING) {
        close_fd(&r->stream);
        r->dead = r->pid == 0;
      } else {
        abandon(r);
      }
      return;
    }
    if (r->state == DISCARD) {
      unsigned long long take = (unsigned long long)got < r->discard_left ? (unsigned long long)got : r->discard_left;
      r->discard_left -= take;
      if (r->discard_left == 0) {
        emit_error("a wrapper sent an exec request larger than 1 MiB; denied", NULL);
        deny(r, "the command line and environment are larger than the escalation broker accepts (1 MiB)");
      }
      continue;
    }
    if (r->state == WAIT_DECISION || r->state == FINISHING) continue; /* nothing expected: ignored */
    ubuf_put(&r->in, buffer, (size_t)got);
    while (r->in.len >= 4 && (r->state == READ_REQUEST || r->state == WAIT_FDS || r->state == RUNNING)) {
      const unsigned char *h = (const unsigned char *)r->in.data;
      uint32_t len = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 24;
      if (len > MAX_FRAME) {
        if (r->state != READ_REQUEST || len > MAX_DISCARD) {
          emit_error("a wrapper sent an oversized frame", NULL);
          if (r->state == READ_REQUEST) deny(r, "the exec request is too large for the escalation broker");
          else abandon(r);
          return;
        }
        r->discard_left = len - (r->in.len - 4);
        r->in.len = 0;
        r->state = DISCARD;
        if (r->discard_left == 0) {
          emit_error("a wrapper sent an exec request larger than 1 MiB; denied", NULL);
          deny(r, "the command line and environment are larger than the escalation broker accepts (1 MiB)");
        }
        break;
      }
      if (r->in.len - 4 < len) break;
      frame_received(r, r->in.data + 4, len);
      size_t used = 4 + (size_t)len;
      memmove(r->in.data, r->in.data + used, r->in.len - used);
      r->in.len -= used;
      if (r->dead || r->stream < 0) return;
    }
  }
}

/* ---- sessions and their datagram sockets ------------------------------------------------------ */

static session *find_session(const char *id) {
  for (session *s = sessions; s; s = s->next)
    if (!s->dead && strcmp(s->id, id) == 0) return s;
  return NULL;
}

static void new_request(session *s, int stream) {
  request *r = calloc(1, sizeof *r);
  if (r == NULL) ujson_out_of_memory();
  r->id = next_request_id++;
  r->owner = s;
  r->stream = stream;
  r->state = READ_REQUEST;
  set_nonblocking(stream);
  r->next = requests;
  requests = r;
  read_request(r);
}

static void read_session(session *s) {
  for (;;) {
    if (s->dgram < 0) return;
    char payload[16];
    char control[CMSG_SPACE(sizeof(int) * 8)];
    struct iovec iov = {payload, sizeof payload};
    struct msghdr msg = {0};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t got = recvmsg(s->dgram, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (got < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return;
      close_fd(&s->dgram);
      return;
    }
    int received[8];
    int count = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      int n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
      for (int i = 0; i < n; i++) {
        int fd = ((int *)CMSG_DATA(c))[i];
        if (count < 8) received[count++] = fd;
        else close(fd);
      }
    }
    int type = 0;
    socklen_t type_len = sizeof type;
    if (count == 1 && !(msg.msg_flags & MSG_CTRUNC) &&
        getsockopt(received[0], SOL_SOCKET, SO_TYPE, &type, &type_len) == 0 && type == SOCK_STREAM) {
      new_request(s, received[0]);
    } else {
      for (int i = 0; i < count; i++) close(received[i]);
      emit_error("a datagram without exactly one stream socket attached was ignored", NULL);
    }
  }
}

/* Closes a session: its socket at once, its requests' wrappers, its children (SIGTERM, then SIGKILL). */
static void close_session(session *s) {
  s->closing = 1;
  s->token_used = 1;
  close_fd(&s->dgram);
  for (request *r = requests; r; r = r->next) {
    if (r->owner != s || r->dead || r->state == FINISHING) continue;
    if (r->state == RUNNING) terminate_child(r);
    else abandon(r);
  }
}

/* Sessions that are closing and have no child left are gone: tell Node. */
static void settle_sessions(void) {
  for (session *s = sessions; s; s = s->next) {
    if (!s->closing || s->dead) continue;
    int busy = 0;
    for (request *r = requests; r; r = r->next)
      if (r->owner == s && !r->dead && r->pid > 0) busy = 1;
    if (busy) continue;
    for (request *r = requests; r; r = r->next)
      if (r->owner == s) r->owner = NULL;
    ubuf_puts(&to_node, "{\"type\":\"closed\",\"session\":");
    ubuf_json_cstring(&to_node, s->id);
    ubuf_puts(&to_node, ",\"cachedRuns\":");
    ubuf_int(&to_node, (long long)s->cache_hits);
    ubuf_putc(&to_node, '}');
    emit_end();
    cache_clear(s);
    s->dead = 1;
  }
}

/* ---- the handshake with the spawn helper ------------------------------------------------------ */

static void refuse(pending *p, const char *reason) {
  for (int i = 0; i < p->nfds; i++) close(p->fds[i]);
  p->nfds = 0;
  close_fd(&p->fd);
  p->dead = 1;
  ubuf_puts(&to_node, "{\"type\":\"refused\",\"reason\":");
  ubuf_json_cstring(&to_node, reason);
  ubuf_putc(&to_node, '}');
  emit_end();
}

static void accept_connections(void) {
  for (;;) {
    int fd = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      return;
    }
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
        (cred.uid != getuid() && cred.uid != 0)) {
      close(fd);
      ubuf_puts(&to_node, "{\"type\":\"refused\",\"reason\":\"a connection from another user\"}");
      emit_end();
      continue;
    }
    pending *p = calloc(1, sizeof *p);
    if (p == NULL) ujson_out_of_memory();
    p->fd = fd;
    p->deadline = now_ms() + HANDSHAKE_MS;
    p->next = pendings;
    pendings = p;
  }
}

static int valid_token(const char *token) {
  size_t len = strlen(token);
  if (len < 16 || len > MAX_TOKEN) return 0;
  for (size_t i = 0; i < len; i++) {
    char c = token[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return 0;
  }
  return 1;
}

static void read_handshake(pending *p) {
  for (;;) {
    char buffer[256];
    char control[CMSG_SPACE(sizeof(int) * 4)];
    struct iovec iov = {buffer, sizeof buffer};
    struct msghdr msg = {0};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t got = recvmsg(p->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (got < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return;
      refuse(p, "the connection failed during the handshake");
      return;
    }
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      int n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
      for (int i = 0; i < n; i++) {
        int fd = ((int *)CMSG_DATA(c))[i];
        if (p->nfds < 4) p->fds[p->nfds++] = fd;
        else close(fd);
      }
    }
    if (got == 0) {
      refuse(p, "the connection closed before sending a token");
      return;
    }
    ubuf_put(&p->in, buffer, (size_t)got);
    char *newline = memchr(p->in.data, '\n', p->in.len);
    if (newline == NULL) {
      if (p->in.len > MAX_TOKEN + 1) refuse(p, "the token is too long");
      continue;
    }
    *newline = '\0';
    const char *token = p->in.data;
    session *found = NULL;
    if (valid_token(token)) {
      for (session *s = sessions; s; s = s->next)
        if (!s->dead && !s->closing && strcmp(s->token, token) == 0) found = s;
    }
    if (found == NULL) {
      refuse(p, "an unknown token");
      return;
    }
    if (found->token_used) {
      refuse(p, "a token that was already used");
      return;
    }
    int type = 0;
    socklen_t type_len = sizeof type;
    if (p->nfds != 1 || getsockopt(p->fds[0], SOL_SOCKET, SO_TYPE, &type, &type_len) != 0 ||
        type != SOCK_DGRAM) {
      refuse(p, "the handshake did not carry exactly one datagram socket");
      return;
    }
    found->token_used = 1;
    found->dgram = p->fds[0];
    p->nfds = 0;
    set_nonblocking(found->dgram);
    send(p->fd, "\x06", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    close_fd(&p->fd);
    p->dead = 1;
    emit_session_event("connected", found->id);
    read_session(found);
    return;
  }
}

/* ---- messages from Node ----------------------------------------------------------------------- */

static request *find_request(long long id) {
  for (request *r = requests; r; r = r->next)
    if (!r->dead && r->id == id) return r;
  return NULL;
}

/* A decimal number of 1 to 20 digits that fits in 64 bits, as a JSON string; 0 on success. */
static int decimal_u64(const jnode *node, unsigned long long *out) {
  const char *text = json_cstring(node);
  if (text == NULL || *text == '\0' || strlen(text) > 20) return -1;
  unsigned long long value = 0;
  for (const char *p = text; *p; p++) {
    if (*p < '0' || *p > '9') return -1;
    unsigned digit = (unsigned)(*p - '0');
    if (value > (ULLONG_MAX - digit) / 10) return -1;
    value = value * 10 + digit;
  }
  *out = value;
  return 0;
}

static int dev_ino(const jnode *node, unsigned long long *pair) {
  if (node == NULL || node->type != JSON_OBJECT) return -1;
  return decimal_u64(json_get(node, "dev"), &pair[0]) || decimal_u64(json_get(node, "ino"), &pair[1]) ? -1 : 0;
}

/*
 * {"dev":D,"ino":I,"ancestors":[{"dev","ino"},...]} (decimal strings; the ancestors from the parent up
 * to `/`, empty for `/` itself) → 2 numbers per level, the directory first; 0 on success.
 */
static int cwd_identity(const jnode *node, unsigned long long **chain, size_t *levels, const char **error) {
  const jnode *ancestors = node ? json_get(node, "ancestors") : NULL;
  if (node == NULL || node->type != JSON_OBJECT || ancestors == NULL || ancestors->type != JSON_ARRAY ||
      ancestors->count > 4096) {
    *error = "cwdIdentity must be {dev, ino, ancestors: [{dev, ino}, ...]}";
    return -1;
  }
  unsigned long long *list = calloc(2 * (ancestors->count + 1), sizeof *list);
  if (list == NULL) ujson_out_of_memory();
  int bad = dev_ino(node, list);
  size_t n = 1;
  for (const jnode *item = ancestors->child; item && !bad; item = item->next) bad = dev_ino(item, &list[2 * n++]);
  if (bad) {
    free(list);
    *error = "cwdIdentity: dev and ino must be decimal strings";
    return -1;
  }
  *chain = list;
  *levels = n;
  return 0;
}

static void handle_reply(const jnode *root) {
  long long id;
  if (json_int(json_get(root, "request"), 1, LLONG_MAX, &id) != 0) {
    emit_error("a reply without a request number", NULL);
    return;
  }
  const char *action = json_cstring(json_get(root, "action"));
  if (action == NULL) {
    emit_error("a reply without an action", NULL);
    return;
  }
  request *r = find_request(id);
  /* The wrapper may have gone while Node decided ("cancelled" told it): nothing to answer. */
  if (r == NULL || r->state != WAIT_DECISION) return;
  if (strcmp(action, "run") == 0) {
    const jnode *cache = json_get(root, "cache");
    if (cache && cache->type == JSON_TRUE && r->key && r->owner && !r->owner->closing && !r->owner->dead)
      cache_add(r->owner, r->key, r->key_len, r->key_hash);
    static const char run[] = "{\"action\":\"Run\"}";
    queue_frame(r, run, sizeof run - 1);
    r->state = FINISHING;
    flush_request(r);
  } else if (strcmp(action, "deny") == 0) {
    const char *reason = json_cstring(json_get(root, "reason"));
    deny(r, reason && *reason ? reason : "denied by policy");
  } else if (strcmp(action, "escalate") == 0) {
    const char *error = NULL;
    const char *cwd = json_cstring(json_get(root, "cwd"));
    char **argv = string_array(json_get(root, "argv"), &error);
    char **envp = argv ? env_array(json_get(root, "env"), &error) : NULL;
    if (argv && argv[0] == NULL) error = "argv must not be empty";
    if (!error && cwd == NULL) error = "cwd must be a string without NUL bytes";
    if (error) {
      free_strings(argv);
      free_strings(envp);
      emit_error("an invalid escalate reply", error);
      deny(r, "the escalation broker received an invalid escalation for this command");
      return;
    }
    unsigned long long *chain = NULL;
    size_t levels = 0;
    const jnode *identity = json_get(root, "cwdIdentity");
    if (identity != NULL && identity->type != JSON_NULL &&
        cwd_identity(identity, &chain, &levels, &error) != 0) {
      free_strings(argv);
      free_strings(envp);
      emit_error("an invalid escalate reply", error);
      deny(r, "the escalation broker received an invalid escalation for this command");
      return;
    }
    r->argv = argv;
    r->envp = envp;
    r->cwd_chain = chain;
    r->cwd_levels = levels;
    r->cwd = strdup(cwd);
    if (r->cwd == NULL) ujson_out_of_memory();
    static const char escalate[] = "{\"action\":\"Escalate\"}";
    queue_frame(r, escalate, sizeof escalate - 1);
    r->state = WAIT_FDS;
    flush_request(r);
  } else {
    emit_error("a reply with an unknown action", action);
    deny(r, "the escalation broker received an unknown decision for this command");
  }
}

static void handle_line(const char *line, size_t len) {
  if (len == 0) return;
  jarena arena = {0};
  const char *error = NULL;
  jnode *root = json_parse(&arena, line, len, &error);
  const char *op = root ? json_cstring(json_get(root, "op")) : NULL;
  if (root == NULL) {
    emit_error("a message that is not JSON", error);
  } else if (op == NULL) {
    emit_error("a message without an op", NULL);
  } else if (strcmp(op, "reply") == 0) {
    handle_reply(root);
  } else if (strcmp(op, "open") == 0) {
    const char *id = json_cstring(json_get(root, "session"));
    const char *token = json_cstring(json_get(root, "token"));
    if (id == NULL || *id == '\0' || token == NULL || !valid_token(token)) {
      emit_error("open needs a session id and a token of 16 to 128 hex digits", NULL);
    } else if (find_session(id)) {
      emit_error("open: the session already exists", id);
    } else {
      int reused = 0;
      for (session *s = sessions; s; s = s->next)
        if (strcmp(s->token, token) == 0) reused = 1;
      if (reused) {
        emit_error("open: the token was already registered", id);
      } else {
        session *s = calloc(1, sizeof *s);
        if (s == NULL) ujson_out_of_memory();
        s->id = strdup(id);
        if (s->id == NULL) ujson_out_of_memory();
        strcpy(s->token, token);
        s->dgram = -1;
        s->next = sessions;
        sessions = s;
        emit_session_event("opened", id);
      }
    }
  } else if (strcmp(op, "flush") == 0) {
    /* The rules changed: no session answers anything by itself until Node says so again. */
    for (session *s = sessions; s; s = s->next) cache_clear(s);
    ubuf_puts(&to_node, "{\"type\":\"flushed\"}");
    emit_end();
  } else if (strcmp(op, "close") == 0) {
    const char *id = json_cstring(json_get(root, "session"));
    session *s = id ? find_session(id) : NULL;
    if (s == NULL) {
      emit_error("close: no such session", id);
    } else if (!s->closing) {
      close_session(s);
    }
  } else {
    emit_error("an unknown op", op);
  }
  jarena_free(&arena);
}

static void read_stdin(void) {
  char buffer[65536];
  for (;;) {
    ssize_t got = read(0, buffer, sizeof buffer);
    if (got < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return;
      fprintf(stderr, "ux-escalate-broker: stopping: cannot read from Node: %s\n", strerror(errno));
      got = 0;
    }
    if (got == 0) {
      stdin_open = 0;
      stop_requested = 1;
      /* Keep descriptor 0 taken, so received descriptors never land on it. */
      int null_fd = open("/dev/null", O_RDONLY);
      if (null_fd >= 0 && null_fd != 0) {
        dup2(null_fd, 0);
        close(null_fd);
      }
      return;
    }
    size_t start = 0;
    for (size_t i = 0; i < (size_t)got; i++) {
      if (buffer[i] != '\n') continue;
      if (discarding_line) {
        discarding_line = 0;
      } else if (from_node.len > 0) {
        ubuf_put(&from_node, buffer + start, i - start);
        handle_line(from_node.data, from_node.len);
        from_node.len = 0;
      } else {
        handle_line(buffer + start, i - start);
      }
      start = i + 1;
    }
    if (start < (size_t)got && !discarding_line) {
      ubuf_put(&from_node, buffer + start, (size_t)got - start);
      if (from_node.len > MAX_LINE) {
        emit_error("a message longer than 64 MiB was dropped", NULL);
        from_node.len = 0;
        discarding_line = 1;
      }
    }
  }
}

/* ---- signals ---------------------------------------------------------------------------------- */

static volatile sig_atomic_t stop_signal_sender;

static void on_signal(int signal_number, siginfo_t *info, void *context) {
  (void)context;
  int saved = errno;
  if (signal_number != SIGCHLD && info != NULL) stop_signal_sender = info->si_pid;
  char byte = (char)signal_number;
  ssize_t ignored = write(sigchld_pipe[1], &byte, 1);
  (void)ignored;
  errno = saved;
}

static void drain_signals(void) {
  char bytes[64];
  ssize_t got;
  while ((got = read(sigchld_pipe[0], bytes, sizeof bytes)) > 0) {
    for (ssize_t i = 0; i < got; i++) {
      if (bytes[i] == SIGTERM || bytes[i] == SIGHUP) {
        if (!stop_requested)
          fprintf(stderr, "ux-escalate-broker: stopping on signal %d from pid %d\n", bytes[i], (int)stop_signal_sender);
        stop_requested = 1;
      }
    }
  }
  reap_children();
}

/* ---- the loop --------------------------------------------------------------------------------- */

static void sweep(void) {
  for (request **link = &requests; *link;) {
    request *r = *link;
    if (r->dead && r->pid == 0) {
      *link = r->next;
      close_fd(&r->stream);
      close_received_fds(r);
      ubuf_free(&r->in);
      ubuf_free(&r->out);
      free_request_plan(r);
      free(r);
    } else {
      link = &r->next;
    }
  }
  for (pending **link = &pendings; *link;) {
    pending *p = *link;
    if (p->dead) {
      *link = p->next;
      ubuf_free(&p->in);
      free(p);
    } else {
      link = &p->next;
    }
  }
  for (session **link = &sessions; *link;) {
    session *s = *link;
    int referenced = 0;
    for (request *r = requests; r; r = r->next)
      if (r->owner == s) referenced = 1;
    if (s->dead && s->dgram < 0 && !referenced) {
      *link = s->next;
      cache_clear(s);
      free(s->id);
      free(s);
      continue;
    }
    link = &s->next;
  }
}

enum { K_STDIN, K_STDOUT, K_LISTENER, K_SIGNALS, K_PENDING, K_SESSION, K_REQUEST };

int main(int argc, char **argv) {
  if (argc != 2) {
    fputs("usage: ux-escalate-broker <socket-path>\n", stderr);
    return 2;
  }
  socket_path = argv[1];
  if (syscall(SYS_getrandom, &hash_seed, sizeof hash_seed, 0) != (long)sizeof hash_seed)
    hash_seed = (uint64_t)now_ms() * 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid();
  signal(SIGPIPE, SIG_IGN);
  signal(SIGINT, SIG_IGN);
  if (pipe2(sigchld_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    perror("ux-escalate-broker: pipe");
    return 1;
  }
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = on_signal;
  action.sa_flags = SA_RESTART | SA_NOCLDSTOP | SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGCHLD, &action, NULL);
  sigaction(SIGTERM, &action, NULL);
  sigaction(SIGHUP, &action, NULL);

  struct sockaddr_un address = {0};
  address.sun_family = AF_UNIX;
  if (strlen(socket_path) >= sizeof address.sun_path) {
    fprintf(stderr, "ux-escalate-broker: the socket path is longer than %zu bytes: %s\n",
            sizeof address.sun_path - 1, socket_path);
    return 1;
  }
  strcpy(address.sun_path, socket_path);
  listener = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  mode_t old_mask = umask(0077);
  int bound = listener >= 0 ? bind(listener, (struct sockaddr *)&address, sizeof address) : -1;
  umask(old_mask);
  if (bound != 0 || listen(listener, 128) != 0) {
    fprintf(stderr, "ux-escalate-broker: cannot listen on %s: %s\n", socket_path, strerror(errno));
    return 1;
  }
  set_nonblocking(0);
  set_nonblocking(1);
  ubuf_puts(&to_node, "{\"type\":\"ready\",\"pid\":");
  ubuf_int(&to_node, getpid());
  ubuf_putc(&to_node, '}');
  emit_end();

  struct pollfd *polls = NULL;
  int *kinds = NULL;
  void **owners = NULL;
  size_t capacity = 0;
  int stopping = 0;
  long long stop_deadline = 0;

  for (;;) {
    flush_to_node();
    if (stop_requested && !stopping) {
      stopping = 1;
      stop_deadline = now_ms() + KILL_GRACE_MS + 1500;
      for (session *s = sessions; s; s = s->next)
        if (!s->dead && !s->closing) close_session(s);
      for (pending *p = pendings; p; p = p->next) {
        for (int i = 0; i < p->nfds; i++) close(p->fds[i]);
        p->nfds = 0;
        close_fd(&p->fd);
        p->dead = 1;
      }
      close_fd(&listener);
      unlink(socket_path);
    }
    settle_sessions();
    sweep();
    flush_to_node();
    if (stopping) {
      int running = 0;
      for (request *r = requests; r; r = r->next)
        if (r->pid > 0) running = 1;
      if (!running || now_ms() >= stop_deadline) {
        for (request *r = requests; r; r = r->next)
          if (r->pid > 0) kill_group(r, SIGKILL);
        /* Best effort to say goodbye; Node may be gone. */
        set_nonblocking(1);
        flush_to_node();
        return 0;
      }
    }

    size_t count = 0;
    size_t needed = 4;
    for (pending *p = pendings; p; p = p->next) needed++;
    for (session *s = sessions; s; s = s->next) needed++;
    for (request *r = requests; r; r = r->next) needed++;
    if (needed > capacity) {
      capacity = needed * 2;
      polls = realloc(polls, capacity * sizeof *polls);
      kinds = realloc(kinds, capacity * sizeof *kinds);
      owners = realloc(owners, capacity * sizeof *owners);
      if (!polls || !kinds || !owners) ujson_out_of_memory();
    }
#define WATCH(fd_, events_, kind_, owner_)                                                               \
  do {                                                                                                 \
    polls[count].fd = (fd_);                                                                           \
    polls[count].events = (short)(events_);                                                            \
    polls[count].revents = 0;                                                                          \
    kinds[count] = (kind_);                                                                            \
    owners[count] = (owner_);                                                                          \
    count++;                                                                                           \
  } while (0)
    if (stdin_open) WATCH(0, POLLIN, K_STDIN, NULL);
    if (to_node.len > 0) WATCH(1, POLLOUT, K_STDOUT, NULL);
    if (listener >= 0) WATCH(listener, POLLIN, K_LISTENER, NULL);
    WATCH(sigchld_pipe[0], POLLIN, K_SIGNALS, NULL);
    long long now = now_ms();
    long long wake = -1;
    for (pending *p = pendings; p; p = p->next) {
      if (p->dead) continue;
      if (now >= p->deadline) {
        refuse(p, "the handshake timed out");
        continue;
      }
      WATCH(p->fd, POLLIN, K_PENDING, p);
      if (wake < 0 || p->deadline < wake) wake = p->deadline;
    }
    for (session *s = sessions; s; s = s->next)
      if (s->dgram >= 0) WATCH(s->dgram, POLLIN, K_SESSION, s);
    for (request *r = requests; r; r = r->next) {
      if (r->kill_at != 0) {
        if (now >= r->kill_at) {
          kill_group(r, SIGKILL);
          r->kill_at = 0;
        } else if (wake < 0 || r->kill_at < wake) {
          wake = r->kill_at;
        }
      }
      if (r->stream < 0 || r->dead) continue;
      WATCH(r->stream, POLLIN | (r->out.len > 0 ? POLLOUT : 0), K_REQUEST, r);
    }
    if (stopping && (wake < 0 || stop_deadline < wake)) wake = stop_deadline;
    int timeout = wake < 0 ? -1 : (int)(wake > now ? wake - now : 0);

    int ready = poll(polls, (nfds_t)count, timeout);
    if (ready < 0) {
      if (errno == EINTR) continue;
      perror("ux-escalate-broker: poll");
      return 1;
    }
    for (size_t i = 0; i < count; i++) {
      short revents = polls[i].revents;
      if (revents == 0) continue;
      switch (kinds[i]) {
      case K_STDIN: read_stdin(); break;
      case K_STDOUT: break; /* flushed at the top of the loop */
      case K_LISTENER: accept_connections(); break;
      case K_SIGNALS: drain_signals(); break;
      case K_PENDING: {
        pending *p = owners[i];
        if (!p->dead) read_handshake(p);
        break;
      }
      case K_SESSION: {
        session *s = owners[i];
        if (revents & (POLLERR | POLLNVAL)) close_fd(&s->dgram);
        else read_session(s);
        break;
      }
      case K_REQUEST: {
        request *r = owners[i];
        if (r->dead || r->stream < 0) break;
        if (revents & POLLOUT) flush_request(r);
        if (!r->dead && r->stream >= 0 && (revents & (POLLIN | POLLHUP | POLLERR))) read_request(r);
        break;
      }
      }
    }
    reap_children();
  }
}
