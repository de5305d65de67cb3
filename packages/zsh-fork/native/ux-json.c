/*
 * ux-json.c: the JSON both native programs of @ux/zsh-fork need, included by each of them as source
 * (`#include "ux-json.c"`); it is not a program of its own.
 *
 * - `ubuf`: a growable byte buffer.
 * - `ubuf_json_string`: writes bytes as a JSON string. Valid UTF-8 is copied as is; control characters,
 *   `"`, `\` and DEL are escaped; every byte that is not part of valid UTF-8 is written as a lone
 *   surrogate `\udcXX` (XX = the byte, 80..ff), the "surrogateescape" convention: JSON.parse keeps it,
 *   JSON.stringify writes it back as the same escape, and `json_parse` turns it into the same byte, so
 *   argv and environment bytes survive a round trip through Node exactly.
 * - `json_parse`: a small strict parser into an arena (depth-limited), enough for the messages the
 *   broker and the wrapper exchange. Strings are decoded to bytes (NUL-terminated, `nul` set when a
 *   `\u0000` made them unusable as C strings).
 */
/* Each program uses part of this file. */
#pragma GCC diagnostic ignored "-Wunused-function"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * For what the execve wrapper's fast path calls before libc starts: no stack protector (its canary
 * lives in TLS, not set up yet) and no loop turned into a memcpy call (the fast build also passes
 * -fno-tree-loop-distribute-patterns).
 */
#if defined(__clang__)
#define UX_NO_LIBC __attribute__((no_stack_protector, noinline))
#else
#define UX_NO_LIBC __attribute__((no_stack_protector, optimize("no-tree-loop-distribute-patterns"), noinline))
#endif

static void ujson_out_of_memory(void) {
  static const char message[] = "ux: out of memory\n";
  ssize_t ignored = write(2, message, sizeof message - 1);
  (void)ignored;
  _exit(1);
}

typedef struct {
  char *data;
  size_t len;
  size_t cap;
} ubuf;

static void ubuf_reserve(ubuf *b, size_t extra) {
  if (b->cap - b->len >= extra) return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap - b->len < extra) {
    if (cap > SIZE_MAX / 2) ujson_out_of_memory();
    cap *= 2;
  }
  char *data = realloc(b->data, cap);
  if (data == NULL) ujson_out_of_memory();
  b->data = data;
  b->cap = cap;
}

static void ubuf_put(ubuf *b, const void *bytes, size_t n) {
  ubuf_reserve(b, n);
  memcpy(b->data + b->len, bytes, n);
  b->len += n;
}

static void ubuf_putc(ubuf *b, char c) {
  ubuf_reserve(b, 1);
  b->data[b->len++] = c;
}

static void ubuf_puts(ubuf *b, const char *s) { ubuf_put(b, s, strlen(s)); }

static void ubuf_int(ubuf *b, long long v) {
  char digits[24];
  int n = snprintf(digits, sizeof digits, "%lld", v);
  ubuf_put(b, digits, (size_t)n);
}

static void ubuf_free(ubuf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when the byte at s does not start one. */
UX_NO_LIBC static size_t utf8_sequence(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  if (c >= 0xc2 && c <= 0xdf) return n >= 2 && (s[1] & 0xc0) == 0x80 ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    if (n < 3 || (s[2] & 0xc0) != 0x80) return 0;
    unsigned char lo = c == 0xe0 ? 0xa0 : 0x80;
    unsigned char hi = c == 0xed ? 0x9f : 0xbf; /* no encoded surrogates */
    return s[1] >= lo && s[1] <= hi ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    if (n < 4 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80) return 0;
    unsigned char lo = c == 0xf0 ? 0x90 : 0x80;
    unsigned char hi = c == 0xf4 ? 0x8f : 0xbf;
    return s[1] >= lo && s[1] <= hi ? 4 : 0;
  }
  return 0;
}

/*
 * Writes `str` as a JSON string at `out` (room for n * 6 + 2 bytes) and returns the end. Loops, no
 * library call, no stack array: the wrapper's fast path (ux-execve-fast.c) calls it before libc starts.
 */
UX_NO_LIBC static char *json_string_at(char *out, const char *str, size_t n) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *s = (const unsigned char *)str;
  *out++ = '"';
  size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      *out++ = (char)c;
      i++;
    } else if (c < 0x80) {
      *out++ = '\\';
      switch (c) {
      case '"': *out++ = '"'; break;
      case '\\': *out++ = '\\'; break;
      case '\n': *out++ = 'n'; break;
      case '\r': *out++ = 'r'; break;
      case '\t': *out++ = 't'; break;
      case '\b': *out++ = 'b'; break;
      case '\f': *out++ = 'f'; break;
      default:
        *out++ = 'u';
        *out++ = '0';
        *out++ = '0';
        *out++ = hex[c >> 4];
        *out++ = hex[c & 15];
      }
      i++;
    } else {
      size_t len = utf8_sequence(s + i, n - i);
      if (len > 0) {
        for (size_t k = 0; k < len; k++) *out++ = str[i + k];
        i += len;
      } else {
        *out++ = '\\';
        *out++ = 'u';
        *out++ = 'd';
        *out++ = 'c';
        *out++ = hex[c >> 4];
        *out++ = hex[c & 15];
        i++;
      }
    }
  }
  *out++ = '"';
  return out;
}

static void ubuf_json_string(ubuf *b, const char *str, size_t n) {
  /* Worst case: every byte becomes a 6-character escape. */
  ubuf_reserve(b, n * 6 + 2);
  b->len = (size_t)(json_string_at(b->data + b->len, str, n) - b->data);
}

static void ubuf_json_cstring(ubuf *b, const char *s) { ubuf_json_string(b, s, strlen(s)); }

/* ---- parsing ---------------------------------------------------------------------------------- */

enum { JSON_NULL, JSON_FALSE, JSON_TRUE, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

typedef struct jnode {
  int type;
  int nul;          /* a string holding a NUL byte */
  int is_int;       /* a number without fraction or exponent that fits in a long long */
  long long integer;
  double number;
  char *str;        /* string value, NUL-terminated */
  size_t len;
  char *key;        /* member name, for an object's members */
  size_t keylen;
  int keynul;
  size_t count;     /* array or object: number of children */
  struct jnode *child;
  struct jnode *next;
} jnode;

typedef struct jblock {
  struct jblock *prev;
  size_t used;
  size_t size;
  char data[];
} jblock;

typedef struct {
  jblock *top;
} jarena;

static void *jarena_alloc(jarena *a, size_t size) {
  size = (size + 15) & ~(size_t)15;
  if (a->top == NULL || a->top->size - a->top->used < size) {
    size_t want = size > 16384 ? size : 16384;
    jblock *block = malloc(sizeof(jblock) + want);
    if (block == NULL) ujson_out_of_memory();
    block->prev = a->top;
    block->used = 0;
    block->size = want;
    a->top = block;
  }
  void *p = a->top->data + a->top->used;
  a->top->used += size;
  return p;
}

static void jarena_free(jarena *a) {
  while (a->top) {
    jblock *prev = a->top->prev;
    free(a->top);
    a->top = prev;
  }
}

typedef struct {
  const unsigned char *s;
  size_t n;
  size_t i;
  jarena *arena;
  const char *error;
} jparser;

#define JSON_MAX_DEPTH 64
#define ULLONG_MAX_SAFE ((unsigned long long)LLONG_MAX)

static void jskip(jparser *p) {
  while (p->i < p->n) {
    unsigned char c = p->s[p->i];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
    p->i++;
  }
}

static int jfail(jparser *p, const char *error) {
  if (p->error == NULL) p->error = error;
  return -1;
}

static int jhex4(jparser *p, unsigned *out) {
  if (p->n - p->i < 4) return jfail(p, "truncated \\u escape");
  unsigned v = 0;
  for (int k = 0; k < 4; k++) {
    unsigned char c = p->s[p->i++];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
    else return jfail(p, "bad \\u escape");
  }
  *out = v;
  return 0;
}

static char *jput_utf8(char *out, unsigned cp) {
  if (cp < 0x80) {
    *out++ = (char)cp;
  } else if (cp < 0x800) {
    *out++ = (char)(0xc0 | (cp >> 6));
    *out++ = (char)(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    *out++ = (char)(0xe0 | (cp >> 12));
    *out++ = (char)(0x80 | ((cp >> 6) & 0x3f));
    *out++ = (char)(0x80 | (cp & 0x3f));
  } else {
    *out++ = (char)(0xf0 | (cp >> 18));
    *out++ = (char)(0x80 | ((cp >> 12) & 0x3f));
    *out++ = (char)(0x80 | ((cp >> 6) & 0x3f));
    *out++ = (char)(0x80 | (cp & 0x3f));
  }
  return out;
}

/* Parses a string at p->i (on the opening quote) into arena memory. */
static int jstring(jparser *p, char **str, size_t *len, int *nul) {
  p->i++; /* opening quote */
  size_t start = p->i;
  size_t end = start;
  /* First pass: find the closing quote (decoded text is never longer than the source). */
  while (end < p->n && p->s[end] != '"') {
    if (p->s[end] == '\\') end++;
    end++;
  }
  if (end >= p->n) return jfail(p, "unterminated string");
  char *out = jarena_alloc(p->arena, end - start + 1);
  char *o = out;
  *nul = 0;
  while (p->i < end) {
    unsigned char c = p->s[p->i];
    if (c < 0x20) return jfail(p, "control character in string");
    if (c != '\\') {
      *o++ = (char)c;
      p->i++;
      continue;
    }
    p->i++;
    unsigned char e = p->s[p->i++];
    switch (e) {
    case '"': *o++ = '"'; break;
    case '\\': *o++ = '\\'; break;
    case '/': *o++ = '/'; break;
    case 'b': *o++ = '\b'; break;
    case 'f': *o++ = '\f'; break;
    case 'n': *o++ = '\n'; break;
    case 'r': *o++ = '\r'; break;
    case 't': *o++ = '\t'; break;
    case 'u': {
      unsigned cp;
      if (jhex4(p, &cp) < 0) return -1;
      if (cp >= 0xd800 && cp <= 0xdbff) {
        unsigned lo = 0;
        size_t save = p->i;
        if (p->i + 6 <= end && p->s[p->i] == '\\' && p->s[p->i + 1] == 'u') {
          p->i += 2;
          if (jhex4(p, &lo) < 0) return -1;
        }
        if (lo >= 0xdc00 && lo <= 0xdfff) {
          cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        } else {
          p->i = save;
          cp = 0xfffd; /* a lone high surrogate */
        }
      } else if (cp >= 0xdc80 && cp <= 0xdcff) {
        *o++ = (char)(cp - 0xdc00); /* surrogateescape: the raw byte */
        break;
      } else if (cp >= 0xdc00 && cp <= 0xdfff) {
        cp = 0xfffd;
      }
      if (cp == 0) *nul = 1;
      o = jput_utf8(o, cp);
      break;
    }
    default:
      return jfail(p, "bad escape in string");
    }
  }
  p->i = end + 1;
  *o = '\0';
  *str = out;
  *len = (size_t)(o - out);
  return 0;
}

static int jvalue(jparser *p, jnode *node, int depth);

static int jnumber(jparser *p, jnode *node) {
  size_t start = p->i;
  int negative = 0;
  if (p->s[p->i] == '-') {
    negative = 1;
    p->i++;
  }
  if (p->i >= p->n || p->s[p->i] < '0' || p->s[p->i] > '9') return jfail(p, "bad number");
  if (p->s[p->i] == '0' && p->i + 1 < p->n && p->s[p->i + 1] >= '0' && p->s[p->i + 1] <= '9')
    return jfail(p, "bad number");
  unsigned long long magnitude = 0;
  int overflow = 0;
  while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') {
    unsigned digit = (unsigned)(p->s[p->i++] - '0');
    if (magnitude > (ULLONG_MAX_SAFE - digit) / 10) overflow = 1;
    else magnitude = magnitude * 10 + digit;
  }
  int fraction = 0;
  if (p->i < p->n && p->s[p->i] == '.') {
    fraction = 1;
    p->i++;
    if (p->i >= p->n || p->s[p->i] < '0' || p->s[p->i] > '9') return jfail(p, "bad number");
    while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
  }
  if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
    fraction = 1;
    p->i++;
    if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-')) p->i++;
    if (p->i >= p->n || p->s[p->i] < '0' || p->s[p->i] > '9') return jfail(p, "bad number");
    while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
  }
  node->type = JSON_NUMBER;
  char text[64];
  size_t len = p->i - start;
  if (len >= sizeof text) len = sizeof text - 1;
  memcpy(text, p->s + start, len);
  text[len] = '\0';
  node->number = strtod(text, NULL);
  if (!fraction && !overflow) {
    node->is_int = 1;
    node->integer = negative ? -(long long)magnitude : (long long)magnitude;
  }
  return 0;
}

static int jliteral(jparser *p, const char *word, int type, jnode *node) {
  size_t len = strlen(word);
  if (p->n - p->i < len || memcmp(p->s + p->i, word, len) != 0) return jfail(p, "unexpected token");
  p->i += len;
  node->type = type;
  return 0;
}

static int jvalue(jparser *p, jnode *node, int depth) {
  memset(node, 0, sizeof *node);
  if (depth > JSON_MAX_DEPTH) return jfail(p, "nested too deeply");
  jskip(p);
  if (p->i >= p->n) return jfail(p, "unexpected end");
  unsigned char c = p->s[p->i];
  if (c == '"') {
    node->type = JSON_STRING;
    return jstring(p, &node->str, &node->len, &node->nul);
  }
  if (c == '{' || c == '[') {
    int object = c == '{';
    node->type = object ? JSON_OBJECT : JSON_ARRAY;
    p->i++;
    jskip(p);
    if (p->i < p->n && p->s[p->i] == (object ? '}' : ']')) {
      p->i++;
      return 0;
    }
    jnode **tail = &node->child;
    for (;;) {
      jnode *item = jarena_alloc(p->arena, sizeof(jnode));
      char *key = NULL;
      size_t keylen = 0;
      int keynul = 0;
      if (object) {
        jskip(p);
        if (p->i >= p->n || p->s[p->i] != '"') return jfail(p, "expected a member name");
        if (jstring(p, &key, &keylen, &keynul) < 0) return -1;
        jskip(p);
        if (p->i >= p->n || p->s[p->i] != ':') return jfail(p, "expected ':'");
        p->i++;
      }
      if (jvalue(p, item, depth + 1) < 0) return -1;
      item->key = key;
      item->keylen = keylen;
      item->keynul = keynul;
      *tail = item;
      tail = &item->next;
      node->count++;
      jskip(p);
      if (p->i >= p->n) return jfail(p, "unexpected end");
      if (p->s[p->i] == ',') {
        p->i++;
        continue;
      }
      if (p->s[p->i] == (object ? '}' : ']')) {
        p->i++;
        return 0;
      }
      return jfail(p, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
  }
  if (c == '-' || (c >= '0' && c <= '9')) return jnumber(p, node);
  if (c == 't') return jliteral(p, "true", JSON_TRUE, node);
  if (c == 'f') return jliteral(p, "false", JSON_FALSE, node);
  if (c == 'n') return jliteral(p, "null", JSON_NULL, node);
  return jfail(p, "unexpected character");
}

/* Parses one JSON value filling all of text[0..n); NULL with *error set when it is not valid JSON. */
static jnode *json_parse(jarena *arena, const char *text, size_t n, const char **error) {
  jparser p = {(const unsigned char *)text, n, 0, arena, NULL};
  jnode *root = jarena_alloc(arena, sizeof(jnode));
  if (jvalue(&p, root, 0) == 0) {
    jskip(&p);
    if (p.i != n) jfail(&p, "trailing characters");
  }
  if (p.error) {
    *error = p.error;
    return NULL;
  }
  return root;
}

/* The member `name` of an object (the last one when repeated), or NULL. */
static jnode *json_get(const jnode *object, const char *name) {
  if (object == NULL || object->type != JSON_OBJECT) return NULL;
  size_t len = strlen(name);
  jnode *found = NULL;
  for (jnode *m = object->child; m; m = m->next)
    if (m->keylen == len && memcmp(m->key, name, len) == 0) found = m;
  return found;
}

/* A usable C string: a JSON string without NUL bytes. */
static const char *json_cstring(const jnode *node) {
  return node && node->type == JSON_STRING && !node->nul ? node->str : NULL;
}

/* An integer member within [min, max]; 0 on success. */
static int json_int(const jnode *node, long long min, long long max, long long *out) {
  if (node == NULL || node->type != JSON_NUMBER || !node->is_int) return -1;
  if (node->integer < min || node->integer > max) return -1;
  *out = node->integer;
  return 0;
}
