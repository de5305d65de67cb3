import { homedir } from 'node:os';
import { posix, win32 } from 'node:path';
import type { EffectivePolicy, NetworkAccessEvent, SandboxDenial } from '@ux/protocol/core';
import {
  canonicalize,
  type FsView,
  globToRegExp,
  isUnder,
  nodeFsView,
  protectedEntryFor,
  readableText,
  resolveSandboxLayout,
  type SandboxLayout,
} from '@ux/protocol-utils';

/** What a receipt knows about a command that may have run into its sandbox. */
export interface DenialEvidence {
  /** What the command printed in this wait (text). */
  output: string;
  /** When it exited in this wait. */
  exitCode?: number;
  /**
   * The policy the command ran under (its environment's). A run outside any sandbox (an approved
   * escalation, a rerun without the sandbox) ran under none: pass an unrestricted policy
   * (`{ fileSystem: { kind: 'unrestricted' }, network: 'enabled' }`), and nothing is blamed on it.
   */
  policy: EffectivePolicy;
  /** Its working directory (relative paths in messages resolve here). */
  cwd: string;
  /** It ran on an exec-server. */
  remote: boolean;
  /** Refused proxy exchanges during this wait. */
  proxyRefusals: readonly NetworkAccessEvent[];
  /** The orchestrator caught a denial in the early-exit window. */
  earlyDenied: boolean;
  /**
   * This call could ask to run outside the sandbox (exec_command, approval policy on-request, someone
   * to ask, no deny-read): the next step says how.
   */
  canEscalate: boolean;
}

export interface NamedDenial {
  denial: SandboxDenial;
  /** What to do about it, in one or two sentences. */
  nextStep: string;
}

/** Only the end of a long output is read (64 Ki characters): the failure that ended a command is printed last. */
export const NAME_DENIAL_SCAN_CHARS = 64 * 1024;

/**
 * Names a failure as the sandbox's doing, in the model's words, when the command's output (or the
 * network proxy) shows it ran into something its policy forbade: a write outside the writable places
 * or to a protected name, a read of a hidden path, a socket, a connection or a DNS lookup with the
 * network off, a host the proxy refused. Never when the policy allowed the action: `Permission
 * denied` on a writable file is the file's mode, a DNS failure with the network on is the network's.
 * Undefined when nothing points at the sandbox (docs/denials.md).
 */
export function nameDenial(evidence: DenialEvidence): NamedDenial | undefined {
  const output =
    evidence.output.length > NAME_DENIAL_SCAN_CHARS
      ? evidence.output.slice(-NAME_DENIAL_SCAN_CHARS)
      : evidence.output;
  const refused = evidence.proxyRefusals.filter(
    (event) =>
      (event.decision === 'denied' || event.decision === 'asked_denied') && event.denial !== 'cancelled',
  );
  // A command that succeeded failed at nothing, except one that printed the proxy's refusal as its
  // result (`curl http://…` exits 0 with the 403's body).
  if (evidence.exitCode === 0) {
    if (refused.length > 0 && output.includes(PROXY_BODY_PREFIX)) return proxyDenial(refused, evidence);
    return undefined;
  }
  if (refused.length > 0) return proxyDenial(refused, evidence);
  const scan: Scan = { evidence };
  const fromText = SIGNAL.test(output) ? fromOutput(output, scan) : undefined;
  if (fromText) return fromText;
  if (evidence.earlyDenied && !scan.cleared) return processDenial(evidence);
  return undefined;
}

// --- reading the output ---------------------------------------------------------------------------

/** Every fragment below, in one test: most outputs have none, and are dismissed by this alone. */
const SIGNAL =
  /read-only file system|permission denied|not permitted|resource busy|\b(?:EROFS|EACCES|EPERM|EBUSY|ENETUNREACH|EAI_AGAIN|ENOTFOUND|EAI_NONAME)\b|errno (?:30|13|1|-[235])\]|os error (?:30|13)\)|resolve|name resolution|service not known|servname|unreachable|couldn't connect to server|blocked by ux|tunnel failed|no such host|server misbehaving|ux: network access to|address associated with hostname/i;

const EROFS = /read-only file system|\bEROFS\b|\[errno 30\]|os error 30\b/i;
const EACCES = /permission denied|\bEACCES\b|\[errno 13\]|os error 13\b/i;
const EPERM = /operation not permitted|\bEPERM\b|\[errno 1\]/i;
const EBUSY = /device or resource busy|\bEBUSY\b/i;

/** Words of an operation that changes the file system, for the errors reads and writes share. */
const WRITE_VERB =
  /\b(?:touch|creat\w*|writ\w*|mkdir|make director\w*|remov\w*|unlink\w*|rmdir|renam\w*|mov\w*|symlink|link\w*|copy\w*|copyfile|overwrit\w*|temporary file|chmod|chown|permissions of|ownership of|utime\w*|lock\w*|sav\w*|append\w*|truncat\w*|delet\w*|install\w*)\b|for writing/i;

// The network: group 1 (and 2, a port) name the address or host when the message has one.
const LISTEN_PATTERNS: readonly RegExp[] = [
  // Node: `Error: listen EPERM: operation not permitted 0.0.0.0:3000`
  /\blisten EPERM\b(?::[^\n]*?not permitted)? ?(\S+)?/,
  // Go: `listen tcp :8080: socket: operation not permitted`
  /\blisten (?:tcp|udp|unix)\S* (\S+): (?:socket|bind|listen): (?:operation not permitted|permission denied)/i,
  // uvicorn: `error while attempting to bind on address ('127.0.0.1', 8000): [errno 1] operation not permitted`
  /attempting to bind on address \(([^)]*)\)[^\n]*(?:errno 1\]|not permitted)/i,
  // nginx and C programs: `bind() to 0.0.0.0:80 failed (1: Operation not permitted)`, `bind: Operation not permitted`
  // (not bwrap's own `Can't bind mount …`, a sandbox that could not start)
  /\bbind\b(?! mount)(?:\(\))?(?: to (\S+))?[^\n]*?(?:operation not permitted|\bEPERM\b)/i,
];

const CONNECT_PATTERNS: readonly RegExp[] = [
  // Node: `connect EPERM 1.1.1.1:80 - Local (undefined:undefined)`
  /\bconnect (?:EPERM|ENETUNREACH)\b ?(\S+)?/,
  // curl: `Failed to connect to 1.1.1.1 port 443 after 0 ms: Couldn't connect to server`
  /Failed to connect to (\S+) port (\d+)[^\n]*?: (?:Couldn't connect to server|Network is unreachable|Operation not permitted|Permission denied)/,
  // wget: `Connecting to 1.1.1.1:80... failed: Operation not permitted.`
  /Connecting to (\S+?)(?:\|[^|]*\|)?(?::\d+)?\.\.\. failed: (?:Operation not permitted|Network is unreachable)/,
  // Go: `dial tcp 1.1.1.1:443: socket: operation not permitted`
  /\bdial (?:tcp|udp)\S* (\S+): (?:socket|connect): (?:operation not permitted|network is unreachable)/i,
  /\bsocket: operation not permitted/i,
  /network is unreachable|\bENETUNREACH\b|\[errno 101\]/i,
];

/** A failed lookup in words that name no host (Python's `gaierror`, Node's `code: 'EAI_AGAIN'`). */
const GENERIC_DNS =
  /temporary failure in name resolution|name or service not known|nodename nor servname provided|no address associated with hostname|\[errno -[235]\]|\bEAI_AGAIN\b|\bENOTFOUND\b|NameResolutionError/i;

const DNS_PATTERNS: readonly RegExp[] = [
  // ssh: `ssh: Could not resolve hostname github.com: Temporary failure in name resolution`
  /Could not resolve hostname ([^\s:]+)/,
  // curl, git over https: `Could not resolve host: example.com`
  /Could not resolve host(?:: ([^\s'"]+))?/,
  // Node, npm: `getaddrinfo EAI_AGAIN example.com`
  /getaddrinfo (?:EAI_AGAIN|ENOTFOUND|EAI_NONAME|EAI_FAIL) ?([^\s'"]+)?/,
  // wget: `unable to resolve host address ‘example.com’`
  /unable to resolve host address [‘'"]?([^‘’'"\s]+)/,
  // urllib3, requests, pip: `Failed to resolve 'example.com' ([Errno -2] Name or service not known)`
  /Failed to resolve ['"]([^'"]+)['"]/,
  // Go: `dial tcp: lookup example.com on 127.0.0.53:53: …`, `lookup example.com: no such host`
  /\blookup ([^\s:]+)(?: on \S+)?: (?:no such host|server misbehaving|temporary failure|dial udp|i\/o timeout|socket)/i,
  GENERIC_DNS,
];

/** The DNS patterns that name the host. */
const DNS_HOST_PATTERNS = DNS_PATTERNS.slice(0, -1);

/** The proxy's own words (its 403 body, its reason phrase), for a refusal the events did not carry. */
const PROXY_BODY_PREFIX = 'ux: network access to';
const PROXY_TEXT =
  /ux: network access to "?([^\s"]+)"?|Blocked by ux network policy(?:: ([^\s:]+))?|CONNECT tunnel failed, response 403/;

/** Refusals that are someone else's: a server turning down ssh's keys. */
const NOT_THE_SANDBOX = /Permission denied \((?:publickey|password|keyboard-interactive|gssapi)/;

/** Python's socket errors carry no path: the traceback above says whether it was a server. */
const PYTHON_EPERM_NO_PATH = /PermissionError: \[Errno 1\] Operation not permitted\s*$/;
const PYTHON_SERVER_HINT =
  /socketserver|http[./]server|\.bind\(|\.listen\(|serve_forever|create_server|start_server|run_simple|uvicorn|hypercorn|gunicorn|aiohttp\/web|HTTPServer|bind\(/;

interface Scan {
  evidence: DenialEvidence;
  /** A line named a cause the policy allowed: the failure is not the sandbox's, early or not. */
  cleared?: boolean;
  /** Built on the first file message and kept for the rest of the scan. */
  files?: FileJudge;
  /** Paths already judged in this scan (a tool repeats its error for every file), cleared ones. */
  clearedPaths?: Set<string>;
}

/** At most this many lines with a signal are judged, from the end: the cause is among the last. */
const MAX_JUDGED_LINES = 200;

function fromOutput(output: string, scan: Scan): NamedDenial | undefined {
  const lines = output.split(/\r?\n/);
  let judged = 0;
  for (let index = lines.length - 1; index >= 0 && judged < MAX_JUDGED_LINES; index--) {
    const line = lines[index]!;
    if (line.length === 0 || !SIGNAL.test(line)) continue;
    judged++;
    const named = fromLine(lines, index, scan);
    if (named) return named;
  }
  return undefined;
}

function clear(scan: Scan): undefined {
  scan.cleared = true;
  return undefined;
}

function fromLine(lines: readonly string[], index: number, scan: Scan): NamedDenial | undefined {
  const { evidence } = scan;
  const line = lines[index]!;
  const network = evidence.policy.network;
  const proxied = network === 'proxied';

  const proxyText = proxied ? PROXY_TEXT.exec(line) : null;
  if (proxyText) return proxyFromText(line, proxyText[1] ?? proxyText[2] ?? hostNear(lines, index), evidence);

  if (NOT_THE_SANDBOX.test(line)) return clear(scan);
  // With the network on, nothing on the network is the sandbox's doing: the line only says so.
  const blame = network !== 'enabled';
  if (PYTHON_EPERM_NO_PATH.test(line)) {
    const traceback = tracebackAbove(lines, index);
    if (/socket/.test(traceback)) {
      const server = PYTHON_SERVER_HINT.test(traceback);
      // With a network by domain the command has a network of its own, where it may listen.
      if (!blame || (server && proxied)) return clear(scan);
      return server ? listenDenial(undefined, evidence) : connectDenial(undefined, evidence);
    }
  }
  for (const pattern of LISTEN_PATTERNS) {
    const found = pattern.exec(line);
    if (found) return !blame || proxied ? clear(scan) : listenDenial(found[1], evidence);
  }
  // Before connections: Go's failed lookup ends in `dial udp …: socket: operation not permitted`.
  for (const pattern of DNS_PATTERNS) {
    const found = pattern.exec(line);
    if (found) return blame ? dnsDenial(found[1] ?? hostNear(lines, index), evidence) : clear(scan);
  }
  for (const pattern of CONNECT_PATTERNS) {
    const found = pattern.exec(line);
    if (found) return blame ? connectDenial(hostAndPort(found[1], found[2]), evidence) : clear(scan);
  }
  return fileFromLine(lines, index, scan);
}

/** The Python traceback that ends at `index` (up to 60 lines). */
function tracebackAbove(lines: readonly string[], index: number): string {
  const parts: string[] = [];
  for (let at = index - 1; at >= 0 && at >= index - 60; at--) {
    const line = lines[at]!;
    parts.push(line);
    if (line.startsWith('Traceback (most recent call last)')) break;
  }
  return parts.join('\n');
}

function hostAndPort(host: string | undefined, port: string | undefined): string | undefined {
  if (!host) return undefined;
  const clean = host.replace(/[.,;]+$/, '');
  return port ? `${clean}:${port}` : clean;
}

/**
 * A host named near a DNS error without one (within four lines either way): a more specific line
 * (`getaddrinfo EAI_AGAIN x` above Node's `code: 'EAI_AGAIN'`), Node's `hostname: 'x'`, urllib3's
 * `host='x'`; a URL or wget's `Resolving x (x)...` on the line or the one above.
 */
function hostNear(lines: readonly string[], index: number): string | undefined {
  for (let distance = 0; distance <= 4; distance++) {
    for (const at of distance === 0 ? [index] : [index - distance, index + distance]) {
      const line = lines[at];
      if (line === undefined) continue;
      for (const pattern of DNS_HOST_PATTERNS) {
        const found = pattern.exec(line);
        if (found?.[1]) return found[1];
      }
      const named = /\bhost(?:name)?[=:] ?'([^']+)'/.exec(line);
      if (named) return named[1];
      // A URL or wget's `Resolving` only on the line itself or the one above: further away, a URL is
      // as likely some other message's (pip's warning links).
      if (distance > 1 || at > index) continue;
      const url =
        /\b[a-z][a-z0-9+.-]*:\/\/(?:[^@/\s]*@)?([^/:\s'"?#)>]+)/i.exec(line) ??
        /Resolving (\S+) \(/.exec(line);
      if (url) return url[1];
    }
  }
  return undefined;
}

// --- files ----------------------------------------------------------------------------------------

type Errno = 'EROFS' | 'EACCES' | 'EPERM' | 'EBUSY';

function fileFromLine(lines: readonly string[], index: number, scan: Scan): NamedDenial | undefined {
  const { evidence } = scan;
  if (evidence.policy.fileSystem.kind !== 'restricted') return undefined;
  const line = lines[index]!;
  const errno: Errno | undefined = EROFS.test(line)
    ? 'EROFS'
    : EBUSY.test(line)
      ? 'EBUSY'
      : EACCES.test(line)
        ? 'EACCES'
        : EPERM.test(line)
          ? 'EPERM'
          : undefined;
  if (!errno) return undefined;
  let candidates = pathsIn(line);
  // cargo and other Rust tools: the path on a line above, the errno on its own (`Caused by: …`).
  for (let at = index - 1; candidates.length === 0 && at >= 0 && at >= index - 4; at--)
    candidates = quotedPaths(lines[at]!);
  if (candidates.length === 0) return undefined;
  // Seatbelt (macOS) refuses a write with EPERM, whatever the tool was doing: `bash: /etc/x:
  // Operation not permitted`. (A read it refuses is of a hidden path, judged as a read below.)
  const seatbelt = errno === 'EPERM' && !evidence.remote && process.platform === 'darwin';
  const writes = errno === 'EROFS' || errno === 'EBUSY' || seatbelt || WRITE_VERB.test(line);
  scan.files ??= fileJudge(evidence);
  scan.clearedPaths ??= new Set();
  for (const candidate of candidates) {
    const key = `${errno} ${writes} ${candidate}`;
    if (scan.clearedPaths.has(key)) continue;
    const named = judgeFile(candidate, errno, writes, scan.files, evidence);
    if (named) return named;
    scan.clearedPaths.add(key);
  }
  return clear(scan);
}

const QUOTED = /'([^'\n]+)'|‘([^’\n]+)’|"([^"\n]+)"|`([^`\n]+)`|“([^”\n]+)”/g;

/** The paths a line names around its errno, most likely first. */
function pathsIn(line: string): string[] {
  const found: string[] = [];
  const add = (path: string | undefined) => {
    const clean = path?.trim();
    if (clean && looksLikePath(clean) && !found.includes(clean)) found.push(clean);
  };
  // Node and npm: `EROFS: read-only file system, open '/etc/x'` (and ` -> '/etc/y'`).
  const node = /\b(?:EROFS|EACCES|EPERM|EBUSY):[^,\n]*, \w+ '([^']+)'(?: -> '([^']+)')?/.exec(line);
  if (node) {
    add(node[1]);
    add(node[2]);
    return found;
  }
  // Python: `OSError: [Errno 30] Read-only file system: '/etc/x'` (and ` -> '/etc/y'`).
  const python = /\[Errno (?:30|13|1|16)\] [^:'"\n]+: (['"])(.+?)\1(?: -> (['"])(.+?)\3)?\s*$/.exec(line);
  if (python) {
    add(python[2]);
    add(python[4]);
    return found;
  }
  const errorAt = line.search(
    /: (?:read-only file system|permission denied|operation not permitted|device or resource busy)| \((?:read-only file system|permission denied)\)/i,
  );
  const before = errorAt >= 0 ? line.slice(0, errorAt) : line;
  // coreutils, git, cargo: the quoted words before the error (`cannot move 'a' to 'b'`).
  for (const path of quotedPaths(before)) add(path);
  if (found.length > 0 || errorAt < 0) return found;
  // bash, tee, perl, Go, Java: `bash: line 1: /etc/x: …`, `Cannot open /etc/x: …`, `open /etc/x: …`.
  const segments = before.split(': ');
  const last = segments[segments.length - 1]!.trim();
  const token = last.includes(' ') ? last.slice(last.lastIndexOf(' ') + 1) : last;
  // The first segment is the program's name, unless it is itself a path (`/etc/.git: Read-only …`).
  if (segments.length > 1 || token.includes('/')) {
    if (!last.includes(' ') || token.includes('/') || token.startsWith('.')) add(token);
  }
  return found;
}

function quotedPaths(text: string): string[] {
  const paths: string[] = [];
  // An apostrophe inside a word (`can't`, `couldn't`) opens no quote.
  for (const match of text.replace(/(\w)'(\w)/g, '$1\u02bc$2').matchAll(QUOTED)) {
    const path = match.slice(1).find((group) => group !== undefined);
    if (path && looksLikePath(path)) paths.push(path);
  }
  return paths;
}

function looksLikePath(text: string): boolean {
  if (text.length > 4096 || /^(?:line \d+|-e|-c)$/.test(text)) return false;
  // A sentence in quotes is not a path; a path with a space usually has a separator too.
  if (text.includes(' ') && !text.includes('/') && !text.includes('\\')) return false;
  return !/^[a-z][a-z0-9+.-]*:\/\//i.test(text);
}

interface FileJudge {
  cwd: string;
  api: typeof posix;
  pathStyle: 'posix' | 'win32';
  layout: SandboxLayout;
  fs: FsView;
  globs: RegExp[];
}

/**
 * What the policy means for this command's paths: the sandbox layout, the same one its backend
 * enforced (writable roots with their protected names, hidden paths). On an exec-server the files are
 * not this machine's: every path is taken to be a directory that exists, which protects the names git
 * and agents keep (`.git/config`, `.git/hooks`, `.codex`) without looking.
 */
function fileJudge(evidence: DenialEvidence): FileJudge {
  const pathStyle = !evidence.remote && process.platform === 'win32' ? 'win32' : 'posix';
  const api = pathStyle === 'win32' ? win32 : posix;
  const fs = evidence.remote ? everyPathADirectory : nodeFsView();
  const home = evidence.remote ? undefined : homedir();
  const tmpdir = evidence.remote ? undefined : process.env.TMPDIR;
  const layout = resolveSandboxLayout(
    evidence.policy,
    {
      cwd: evidence.cwd,
      projectRoots: [evidence.cwd],
      ...(tmpdir ? { tmpdir } : {}),
      ...(home ? { homeDir: home } : {}),
      pathStyle,
    },
    fs,
    {
      ...(home ? { homeDir: home } : {}),
      ...(evidence.remote ? {} : { pathDirectories: (process.env.PATH ?? '').split(api.delimiter) }),
    },
  );
  return {
    cwd: evidence.cwd,
    api,
    pathStyle,
    layout,
    fs,
    globs: layout.unreadableGlobs.map((glob) => globToRegExp(glob)),
  };
}

const everyPathADirectory: FsView = {
  kind: () => 'dir',
  readFile: () => undefined,
  readdir: () => [],
  realpath: (path) => path,
};

function judgeFile(
  named: string,
  errno: Errno,
  writes: boolean,
  judge: FileJudge,
  evidence: DenialEvidence,
): NamedDenial | undefined {
  const { api, pathStyle, layout } = judge;
  const absolute = api.resolve(evidence.cwd, named);
  const path = canonicalize(absolute, judge.fs, pathStyle);
  const denyRead =
    layout.unreadable.some((root) => isUnder(path, root, pathStyle)) || globCovers(judge.globs, path);
  const uxState = layout.hidden.some((root) => isUnder(path, root, pathStyle));
  if (denyRead || uxState) {
    if (errno === 'EBUSY') return undefined;
    const reason = denyRead
      ? 'the policy hides it from commands (deny_read)'
      : "it is ux's own runtime state, hidden from every sandbox";
    return fileDenial(writes ? 'file_write' : 'file_read', absolute, reason, 'hidden', evidence, judge);
  }
  if (!writes) return undefined;
  const protectedEntry = protectedEntryFor(layout, path, pathStyle);
  if (protectedEntry) {
    const why =
      protectedEntry.path === path
        ? protectedEntry.why
        : `inside ${readableText(protectedEntry.path)}: ${protectedEntry.why}`;
    return fileDenial('file_write', absolute, `it is protected (${why})`, 'protected', evidence, judge);
  }
  if (errno === 'EBUSY') {
    // A directory that holds protected names is pinned in place (a mount point cannot be moved).
    const holds = layout.writableRoots.some(({ readOnly }) =>
      readOnly.some((entry) => entry.path !== path && isUnder(entry.path, path, pathStyle)),
    );
    return holds
      ? fileDenial(
          'file_write',
          absolute,
          'it holds protected files, which the sandbox pins in place',
          'protected',
          evidence,
          judge,
        )
      : undefined;
  }
  if (writable(path, absolute, judge)) return undefined;
  return fileDenial(
    'file_write',
    absolute,
    'it is outside the places this command may write',
    'outside',
    evidence,
    judge,
  );
}

function globCovers(globs: readonly RegExp[], path: string): boolean {
  if (globs.length === 0) return false;
  for (let current = path; ; current = posix.dirname(current)) {
    if (globs.some((glob) => glob.test(current))) return true;
    if (posix.dirname(current) === current) return false;
  }
}

function writable(path: string, absolute: string, judge: FileJudge): boolean {
  const { layout, pathStyle } = judge;
  if (layout.writableRoots.some(({ root }) => isUnder(path, root, pathStyle))) return true;
  // A writable entry that did not exist was granted nothing, but the policy allows it: not a denial.
  if (layout.missingWritableRoots.some((root) => isUnder(absolute, root, pathStyle))) return true;
  // The private /tmp stands in for the host's /tmp and $TMPDIR, writable.
  return layout.privateTmp && pathStyle === 'posix' && isUnder(absolute, '/tmp');
}

function writablePlaces(judge: FileJudge | undefined): string[] {
  if (!judge) return [];
  const roots = judge.layout.writableRoots.map(({ root }) => root);
  if (judge.layout.privateTmp && !roots.includes('/tmp')) roots.push('/tmp');
  // The command's own directory first: that is where its work belongs.
  const cwd = canonicalize(judge.cwd, judge.fs, judge.pathStyle);
  return [...roots.filter((root) => root === cwd), ...roots.filter((root) => root !== cwd)];
}

type FileWhy = 'outside' | 'protected' | 'hidden';

function fileDenial(
  kind: 'file_write' | 'file_read',
  path: string,
  reason: string,
  why: FileWhy,
  evidence: DenialEvidence,
  judge: FileJudge,
): NamedDenial {
  const sandbox = sandboxName(evidence);
  const shown = readableText(path);
  const message =
    kind === 'file_write'
      ? `${sandbox} blocked a write to ${shown}: ${reason}.`
      : `${sandbox} blocked reading ${shown}: ${reason}.`;
  return {
    denial: { kind, message, path },
    nextStep: fileNextStep(why, evidence, writablePlaces(judge)),
  };
}

/** How to ask for a run outside the sandbox; `gains` says what that run has that this one had not. */
function escalate(gains = ''): string {
  return `rerun the command with sandbox_permissions "require_escalated" and a justification (the person is asked; it then runs outside the sandbox${gains})`;
}

function fileNextStep(why: FileWhy, evidence: DenialEvidence, places: readonly string[]): string {
  const where =
    places.length === 0
      ? 'nothing is writable in this sandbox'
      : `the writable places are ${places.slice(0, 4).map(readableText).join(', ')}${places.length > 4 ? ', …' : ''}`;
  switch (why) {
    case 'hidden':
      return 'No approval lifts this: work without that path, or ask the person to change the policy (deny_read).';
    case 'protected':
      return evidence.canEscalate
        ? `If the change is really needed, ${escalate()}; otherwise leave it to the person.`
        : 'Nobody can approve a run outside the sandbox here: leave the change to the person.';
    case 'outside':
      return evidence.canEscalate
        ? `To write there, ${escalate()}; otherwise write inside the sandbox (${where}).`
        : `Nobody can approve a run outside the sandbox here: write inside it instead (${where}).`;
  }
}

// --- network --------------------------------------------------------------------------------------

function sandboxName(evidence: DenialEvidence): string {
  return evidence.remote ? 'The sandbox on the exec-server' : 'The sandbox';
}

function networkOff(evidence: DenialEvidence): string {
  return evidence.remote
    ? 'the network is off for commands on the exec-server'
    : 'the network is off for sandboxed commands';
}

const PROXY_ONLY = "on the network by domain, commands reach the network only through ux's proxy";

function networkNextStep(evidence: DenialEvidence): string {
  if (evidence.policy.network === 'proxied')
    return "Go through the proxy the command's environment names (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY): curl, git, pip and npm read it, Node before 24 does not; hosts outside the allow list are refused.";
  return evidence.canEscalate
    ? `If the command needs the network, ${escalate(', with the network')}.`
    : 'The network is off and nobody can approve more here: work offline (local caches, vendored files), or ask the person to run ux with the network on.';
}

function connectDenial(target: string | undefined, evidence: DenialEvidence): NamedDenial {
  // No address: a socket refused as it was made (Python's `socket()`), connection or server alike.
  const to = target ? `a connection to ${readableText(target)}` : 'a network socket';
  const host = target ? hostOf(target) : undefined;
  const message =
    evidence.policy.network === 'proxied'
      ? `${sandboxName(evidence)} blocked ${to}: ${PROXY_ONLY}.`
      : `${sandboxName(evidence)} blocked ${to}: ${networkOff(evidence)}.`;
  return {
    denial: { kind: 'network', message, ...(host ? { host } : {}) },
    nextStep: networkNextStep(evidence),
  };
}

function dnsDenial(host: string | undefined, evidence: DenialEvidence): NamedDenial {
  const clean = host?.replace(/[.,;:)]+$/, '');
  const what = clean ? `looking up ${readableText(clean)}` : 'a DNS lookup';
  const message =
    evidence.policy.network === 'proxied'
      ? `${clean ? readableText(clean) : 'A host'} could not be looked up: ${PROXY_ONLY}, which looks names up itself; a command has no DNS of its own.`
      : `${sandboxName(evidence)} blocked ${what}: ${networkOff(evidence)}.`;
  return {
    denial: { kind: 'dns', message, ...(clean ? { host: clean } : {}) },
    nextStep: networkNextStep(evidence),
  };
}

function listenDenial(address: string | undefined, evidence: DenialEvidence): NamedDenial {
  const where = address?.replace(/[.,;]+$/, '');
  const on = where ? ` on ${readableText(where)}` : '';
  const message = `${sandboxName(evidence)} blocked a listening socket${on}: ${networkOff(evidence)}, so a command cannot serve on a port.`;
  const nextStep = evidence.canEscalate
    ? `A server needs the network: ${escalate()}, or ask the person to run ux with the network on (--network, or a network by domain, which lets servers listen inside the sandbox).`
    : 'A server needs the network, which is off here, and nobody can approve more: test without a listening socket, or ask the person to run ux with the network on.';
  return { denial: { kind: 'listen', message }, nextStep };
}

function hostOf(target: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(target);
  if (bracketed) return bracketed[1]!;
  const colons = target.split(':').length - 1;
  return colons === 1 ? target.slice(0, target.indexOf(':')) : target;
}

// --- the proxy ------------------------------------------------------------------------------------

const PROXY_REASONS: Record<string, string> = {
  deny_list: 'it matches the deny list (network.deny)',
  not_in_allow_list: 'it is not in the allow list (network.allow)',
  outside_cap:
    "it is outside the allow list the administrator's requirements pin, so nobody here can approve it",
  // The asker answered no: a person, a reviewer, or the fallback when nobody could be asked (the
  // orchestrator answers 'deny' then, and the event cannot tell these apart).
  refused: 'it was refused when approval was asked',
  ask_failed: 'nobody could be asked to approve it',
  local_address: 'the name leads only to local or private addresses',
};

function proxyNextStep(reason: string | undefined, host: string, evidence: DenialEvidence): string {
  const shown = readableText(host);
  switch (reason) {
    case 'deny_list':
      return 'No approval lifts the deny list: use another source, or ask the person to change network.deny.';
    case 'outside_cap':
      return 'Nobody here can approve it: use a host within the allowed ones, or ask the person to have the administrator add it.';
    case 'refused':
      return 'Do not retry that host: the answer was no; if it is really needed, say why in your reply.';
    case 'local_address':
      return `The proxy reaches such addresses only for a name listed exactly in network.allow: ask the person to list ${shown} if it is meant.`;
    default:
      return evidence.canEscalate
        ? `Ask the person to allow ${shown} (network.allow, or ux --allow-domain ${shown}), or ${escalate(', with the full network')}.`
        : `Ask the person to allow ${shown} (network.allow, or ux --allow-domain ${shown}); nobody can approve it from here.`;
  }
}

function proxyDenial(refused: readonly NetworkAccessEvent[], evidence: DenialEvidence): NamedDenial {
  const last = refused[refused.length - 1]!;
  const reason = last.denial ?? (last.decision === 'asked_denied' ? 'refused' : undefined);
  const others = new Set(refused.map((event) => event.host));
  others.delete(last.host);
  const because =
    (reason && PROXY_REASONS[reason]) ??
    `the network policy does not allow it${reason ? ` (${reason})` : ''}`;
  const more =
    others.size === 0 ? '' : others.size === 1 ? ' (and 1 other host)' : ` (and ${others.size} other hosts)`;
  const message = `ux's network proxy refused ${readableText(`${last.host}:${last.port}`)}${more}: ${because}.`;
  return {
    denial: { kind: 'proxy', message, host: last.host, ...(reason ? { reason } : {}) },
    nextStep: proxyNextStep(reason, last.host, evidence),
  };
}

/** The proxy's 403 as the command printed it, when no event came with it. */
function proxyFromText(line: string, host: string | undefined, evidence: DenialEvidence): NamedDenial {
  const reason = /network\.deny|deny list/.test(line)
    ? 'deny_list'
    : /administrator|outside the allow list/.test(line)
      ? 'outside_cap'
      : /refused when approval was asked/.test(line)
        ? 'refused'
        : /could not be approved|nobody could be asked/.test(line)
          ? 'ask_failed'
          : /local or private/.test(line)
            ? 'local_address'
            : /not in network\.allow|not in the allow list|network\.allow/.test(line)
              ? 'not_in_allow_list'
              : undefined;
  const who = host ? readableText(host) : 'a host';
  const because = reason ? PROXY_REASONS[reason]! : 'the network policy does not allow it';
  return {
    denial: {
      kind: 'proxy',
      message: `ux's network proxy refused ${who}: ${because}.`,
      ...(host ? { host } : {}),
      ...(reason ? { reason } : {}),
    },
    nextStep: proxyNextStep(reason, host ?? 'the host', evidence),
  };
}

// --- nothing recognisable -------------------------------------------------------------------------

function processDenial(evidence: DenialEvidence): NamedDenial {
  const code = evidence.exitCode === undefined ? '' : ` (exit code ${evidence.exitCode})`;
  return {
    denial: {
      kind: 'process',
      message: `${sandboxName(evidence)} stopped the command as it started${code}; its output names no blocked path or host.`,
    },
    nextStep: evidence.canEscalate
      ? `If the command needs more than the sandbox allows, ${escalate()}.`
      : 'Nobody can approve a run outside the sandbox here: change the command to stay within the sandbox (its writable places, no network).',
  };
}
