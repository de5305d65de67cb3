import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type EffectivePolicy,
  effectivePolicyFromSandboxPolicy,
  type FileSystemEntry,
  type NetworkAccessEvent,
} from '@ux/protocol/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DenialEvidence, NAME_DENIAL_SCAN_CHARS, nameDenial } from './name-denial.js';

// Every output below is what the tool printed under `ux sandbox` (bubblewrap, network off, a
// workspace-write policy) on Linux, unless a test says otherwise.

let ws: string;

beforeAll(() => {
  ws = mkdtempSync(join(tmpdir(), 'ux-name-denial-'));
  mkdirSync(join(ws, '.git', 'hooks'), { recursive: true });
  writeFileSync(join(ws, '.git', 'config'), '[core]\n\tbare = false\n');
  writeFileSync(join(ws, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(ws, 'sec.txt'), 'secret\n');
  writeFileSync(join(ws, 'locked'), '');
  chmodSync(join(ws, 'locked'), 0o000);
});

afterAll(() => rmSync(ws, { recursive: true, force: true }));

function workspaceWrite(network: EffectivePolicy['network'] = 'restricted', extra: FileSystemEntry[] = []) {
  const policy = effectivePolicyFromSandboxPolicy({
    type: 'workspace-write',
    writable_roots: [],
    network_access: false,
    exclude_tmpdir_env_var: false,
    exclude_slash_tmp: false,
  });
  if (policy.fileSystem.kind !== 'restricted') throw new Error('workspace-write is restricted');
  return {
    ...policy,
    fileSystem: { ...policy.fileSystem, entries: [...policy.fileSystem.entries, ...extra] },
    network,
  } satisfies EffectivePolicy;
}

function evidence(output: string, more: Partial<DenialEvidence> = {}): DenialEvidence {
  return {
    output,
    exitCode: 1,
    policy: workspaceWrite(),
    cwd: ws,
    remote: false,
    proxyRefusals: [],
    earlyDenied: false,
    canEscalate: true,
    ...more,
  };
}

const named = (output: string, more: Partial<DenialEvidence> = {}) => nameDenial(evidence(output, more));

describe('nameDenial: writes the policy forbids', () => {
  it.each([
    ['touch', "touch: cannot touch '/etc/x': Read-only file system", '/etc/x'],
    ['a bash redirection', 'bash: line 1: /etc/x: Read-only file system', '/etc/x'],
    [
      'mkdir (curly quotes)',
      'mkdir: cannot create directory ‘/etc/newdir’: Read-only file system',
      '/etc/newdir',
    ],
    ['cp', "cp: cannot create regular file '/etc/x': Read-only file system", '/etc/x'],
    ['rm', "rm: cannot remove '/etc/hostname': Read-only file system", '/etc/hostname'],
    ['ln', "ln: failed to create symbolic link '/etc/x': Read-only file system", '/etc/x'],
    ['mv', "mv: cannot move '/etc/hostname' to '/etc/y': Read-only file system", '/etc/hostname'],
    ['sed -i', "sed: couldn't open temporary file /etc/sedb9M1dQ: Read-only file system", '/etc/sedb9M1dQ'],
    ['dd', "dd: failed to open '/etc/x': Read-only file system", '/etc/x'],
    ['tee', 'tee: /etc/x: Read-only file system', '/etc/x'],
    ['chmod', "chmod: changing permissions of '/etc/hostname': Read-only file system", '/etc/hostname'],
    ['perl', 'Cannot open /etc/x: Read-only file system at -e line 1.', '/etc/x'],
    ['git init', '/etc/.git: Read-only file system', '/etc/.git'],
    ['git clone', "fatal: could not create work tree dir '/etc/clone': Read-only file system", '/etc/clone'],
    [
      'python open()',
      `Traceback (most recent call last):
  File "<string>", line 1, in <module>
OSError: [Errno 30] Read-only file system: '/etc/x'`,
      '/etc/x',
    ],
    [
      'python pathlib',
      `  File "/root/.pyenv/versions/3.11.7/lib/python3.11/pathlib.py", line 1044, in open
    return io.open(self, mode, buffering, encoding, errors, newline)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
OSError: [Errno 30] Read-only file system: '/usr/x'`,
      '/usr/x',
    ],
    [
      'node writeFileSync (uncaught)',
      `node:fs:2380
    return binding.writeFileUtf8(
                   ^

Error: EROFS: read-only file system, open '/etc/x'
    at Object.writeFileSync (node:fs:2380:20)
    at [eval]:1:15
    at node:internal/main/eval_string:51:3 {
  errno: -30,
  code: 'EROFS',
  syscall: 'open',
  path: '/etc/x'
}

Node.js v20.20.2`,
      '/etc/x',
    ],
    [
      'node rename',
      "Error: EROFS: read-only file system, rename '/etc/hostname' -> '/etc/y'",
      '/etc/hostname',
    ],
    [
      'npm',
      `npm error path /usr/package.json
npm error errno -30
npm error rofs EROFS: read-only file system, open '/usr/package.json'
npm error rofs Often virtualized file systems, or other file systems that don't support symlinks, give this error.
npm error Log files were not written due to an error writing to the directory: /root/.npm/_logs`,
      '/usr/package.json',
    ],
    [
      'cargo (the errno on a line of its own)',
      `error: failed to create directory \`/etc/proj\`

Caused by:
  Read-only file system (os error 30)`,
      '/etc/proj',
    ],
    [
      'pip (permission denied while installing)',
      "ERROR: Could not install packages due to an OSError: [Errno 13] Permission denied: '/usr/local/lib/python3.11/site-packages/six.py'",
      '/usr/local/lib/python3.11/site-packages/six.py',
    ],
  ])('%s', (_tool, output, path) => {
    const result = named(output);
    expect(result?.denial).toEqual({
      kind: 'file_write',
      path,
      message: `The sandbox blocked a write to ${path}: it is outside the places this command may write.`,
    });
    expect(result?.nextStep).toMatch(/sandbox_permissions "require_escalated" and a justification/);
    expect(result?.nextStep).toContain(ws);
  });

  it('says nobody can approve, and where to write instead, when the call cannot escalate', () => {
    const result = named("touch: cannot touch '/etc/x': Read-only file system", { canEscalate: false });
    expect(result?.nextStep).not.toMatch(/require_escalated/);
    expect(result?.nextStep).toMatch(/^Nobody can approve/);
    expect(result?.nextStep).toContain(`the writable places are ${ws}, /tmp`);
  });

  it('resolves a relative path against the working directory (read-only mode: nothing is writable)', () => {
    const readOnly = effectivePolicyFromSandboxPolicy({ type: 'read-only', network_access: false });
    const result = named("touch: cannot touch 'notes.txt': Read-only file system", {
      policy: readOnly,
      canEscalate: false,
    });
    expect(result?.denial).toMatchObject({ kind: 'file_write', path: join(ws, 'notes.txt') });
    expect(result?.nextStep).toContain('nothing is writable in this sandbox');
  });

  it('names the last blocked write when several messages precede it, skipping ones the policy allows', () => {
    const result = named(
      ["touch: cannot touch '/etc/a': Read-only file system", 'bash: line 1: locked: Permission denied'].join(
        '\n',
      ),
    );
    expect(result?.denial.path).toBe('/etc/a');
  });

  it('escapes control characters of a path in the message, and keeps the path itself as data', () => {
    const path = '/etc/a\x1b[2Jb';
    const result = named(`touch: cannot touch '${path}': Read-only file system`);
    expect(result?.denial.path).toBe(path);
    expect(result?.denial.message).toContain('/etc/a\\e[2Jb');
    expect(result?.denial.message).not.toContain('\x1b');
  });
});

describe('nameDenial: Seatbelt (macOS) refuses writes with EPERM', () => {
  const platform = process.platform;
  afterEach(() => Object.defineProperty(process, 'platform', { value: platform }));

  it('names a write whatever words the tool used, on macOS only', () => {
    const output = 'bash: /etc/x: Operation not permitted';
    expect(named(output)).toBeUndefined();
    Object.defineProperty(process, 'platform', { value: 'darwin' });
    expect(named(output)?.denial).toMatchObject({ kind: 'file_write', path: '/etc/x' });
    // A file the policy lets it write is still not the sandbox's.
    expect(named('bash: locked: Operation not permitted')).toBeUndefined();
  });
});

describe('nameDenial: protected names inside the workspace', () => {
  it.each([
    [
      'a bash redirection',
      'bash: line 1: .git/config: Read-only file system',
      '.git/config',
      /git configuration/,
    ],
    [
      'python',
      "OSError: [Errno 30] Read-only file system: '.git/config'",
      '.git/config',
      /git configuration/,
    ],
    [
      'touch in the hooks directory',
      "touch: cannot touch '.git/hooks/pre-commit': Read-only file system",
      '.git/hooks/pre-commit',
      /git hooks/,
    ],
    [
      'git config (the bound file cannot be replaced)',
      'error: could not write config file .git/config: Device or resource busy',
      '.git/config',
      /git configuration/,
    ],
    [
      'mv of the pinned .git directory',
      `mv: cannot move '.git' to '${'/tmp/dn/ws/sub/.git'}': Device or resource busy`,
      '.git',
      /pins in place/,
    ],
  ])('%s', (_tool, output, relative, why) => {
    const result = named(output);
    expect(result?.denial.kind).toBe('file_write');
    expect(result?.denial.path).toBe(join(ws, relative));
    expect(result?.denial.message).toMatch(why);
    expect(result?.nextStep).toMatch(/require_escalated/);
  });

  it('without escalation, leaves the change to the person', () => {
    const result = named('bash: line 1: .git/config: Read-only file system', { canEscalate: false });
    expect(result?.nextStep).toBe(
      'Nobody can approve a run outside the sandbox here: leave the change to the person.',
    );
  });
});

describe('nameDenial: not the sandbox (the policy allowed it)', () => {
  it.each([
    ['a chmod 000 file in the workspace, written', 'bash: line 1: locked: Permission denied'],
    ['a chmod 000 file in the workspace, read', 'cat: locked: Permission denied'],
    ['a program naming a writable path', `Error: EACCES: permission denied, open '${'build/out.js'}'`],
    ['a write EACCES on a writable path', "touch: cannot touch 'locked': Permission denied"],
    ['ssh', 'git@github.com: Permission denied (publickey).'],
    ['a read the policy allows', 'cat: /etc/shadow: Permission denied'],
    ['busy, but not protected', "rm: cannot remove 'out.txt': Device or resource busy"],
    ['an exec of a non-executable file', 'bash: line 1: ./run.sh: Permission denied'],
  ])('%s', (_what, output) => {
    expect(named(output)).toBeUndefined();
    // The orchestrator's early guess does not overrule what the output shows.
    expect(named(output, { earlyDenied: true })).toBeUndefined();
  });

  it('a command that exited 0', () => {
    expect(named("touch: cannot touch '/etc/x': Read-only file system", { exitCode: 0 })).toBeUndefined();
  });

  it('a policy without a file-system sandbox', () => {
    const policy = effectivePolicyFromSandboxPolicy({ type: 'danger-full-access' });
    expect(named("touch: cannot touch '/etc/x': Read-only file system", { policy })).toBeUndefined();
  });

  it('a still-running command is judged too (no exit code yet)', () => {
    const result = named("touch: cannot touch '/etc/x': Read-only file system", { exitCode: undefined });
    expect(result?.denial.kind).toBe('file_write');
  });
});

describe('nameDenial: reads of hidden paths (deny_read)', () => {
  const hidden = (): EffectivePolicy =>
    workspaceWrite('restricted', [
      { path: { type: 'path', path: join(ws, 'sec.txt') }, access: 'none' },
      { path: { type: 'path', path: '/etc/ssl' }, access: 'none' },
      { path: { type: 'glob', pattern: join(ws, '**/*.pem') }, access: 'none' },
    ]);

  it.each([
    ['cat', 'cat: sec.txt: Permission denied', join('WS', 'sec.txt')],
    [
      'python',
      `Traceback (most recent call last):
  File "<string>", line 1, in <module>
PermissionError: [Errno 13] Permission denied: 'sec.txt'`,
      join('WS', 'sec.txt'),
    ],
    ['ls of a hidden directory', "ls: cannot open directory '/etc/ssl': Permission denied", '/etc/ssl'],
    ['a glob', 'cat: keys/server.pem: Permission denied', join('WS', 'keys/server.pem')],
  ])('%s', (_tool, output, path) => {
    const result = named(output, { policy: hidden(), canEscalate: false });
    expect(result?.denial).toEqual({
      kind: 'file_read',
      path: path.replace('WS', ws),
      message: `The sandbox blocked reading ${path.replace('WS', ws)}: the policy hides it from commands (deny_read).`,
    });
    expect(result?.nextStep).toMatch(/^No approval lifts this/);
  });

  it('a write to a hidden path is a blocked write, for the same reason', () => {
    const result = named('bash: line 1: sec.txt: Read-only file system', { policy: hidden() });
    expect(result?.denial).toMatchObject({ kind: 'file_write', path: join(ws, 'sec.txt') });
    expect(result?.denial.message).toMatch(/deny_read/);
  });
});

const NODE_LISTEN = `node:events:502
      throw er; // Unhandled 'error' event
      ^

Error: listen EPERM: operation not permitted 0.0.0.0:3000
    at Server.setupListenHandle [as _listen2] (node:net:1886:21)
    at listenInCluster (node:net:1965:12)
    at Server.listen (node:net:2067:7)
Emitted 'error' event on Server instance at:
    at emitErrorNT (node:net:1944:8)
    at process.processTicksAndRejections (node:internal/process/task_queues:82:21) {
  code: 'EPERM',
  errno: -1,
  syscall: 'listen',
  address: '0.0.0.0',
  port: 3000
}

Node.js v20.20.2`;

const PYTHON_HTTP_SERVER = `Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
  File "<frozen runpy>", line 88, in _run_code
  File "/root/.pyenv/versions/3.11.7/lib/python3.11/http/server.py", line 1313, in <module>
    test(
  File "/root/.pyenv/versions/3.11.7/lib/python3.11/http/server.py", line 1260, in test
    with ServerClass(addr, HandlerClass) as httpd:
         ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/root/.pyenv/versions/3.11.7/lib/python3.11/socketserver.py", line 452, in __init__
    self.socket = socket.socket(self.address_family,
                  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/root/.pyenv/versions/3.11.7/lib/python3.11/socket.py", line 232, in __init__
    _socket.socket.__init__(self, family, type, proto, fileno)
PermissionError: [Errno 1] Operation not permitted`;

const PYTHON_CONNECT = `Traceback (most recent call last):
  File "<string>", line 1, in <module>
  File "/root/.pyenv/versions/3.11.7/lib/python3.11/socket.py", line 851, in create_connection
    raise exceptions[0]
  File "/root/.pyenv/versions/3.11.7/lib/python3.11/socket.py", line 831, in create_connection
    sock = socket(af, socktype, proto)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/root/.pyenv/versions/3.11.7/lib/python3.11/socket.py", line 232, in __init__
    _socket.socket.__init__(self, family, type, proto, fileno)
PermissionError: [Errno 1] Operation not permitted`;

describe('nameDenial: servers with the network off', () => {
  it('node listen', () => {
    const result = named(NODE_LISTEN);
    expect(result?.denial).toEqual({
      kind: 'listen',
      message:
        'The sandbox blocked a listening socket on 0.0.0.0:3000: the network is off for sandboxed commands, so a command cannot serve on a port.',
    });
    expect(result?.nextStep).toMatch(
      /^A server needs the network: rerun the command with sandbox_permissions "require_escalated"/,
    );
    expect(result?.nextStep).toMatch(/--network/);
  });

  it('python -m http.server (the traceback says it was a server)', () => {
    const result = named(PYTHON_HTTP_SERVER, { canEscalate: false });
    expect(result?.denial.kind).toBe('listen');
    expect(result?.nextStep).toMatch(/nobody can approve more/);
  });

  // nginx is not installed on the machine these were captured on: its wording as its error log prints it.
  it('C servers: nginx and a bare bind()', () => {
    expect(
      named('nginx: [emerg] bind() to 0.0.0.0:80 failed (1: Operation not permitted)')?.denial,
    ).toMatchObject({
      kind: 'listen',
      message: expect.stringMatching(/listening socket on 0\.0\.0\.0:80:/),
    });
    expect(named('bind: Operation not permitted')?.denial.kind).toBe('listen');
  });

  it("is not bwrap's own failure to set up a mount", () => {
    const output = "bwrap: Can't bind mount /oldroot/work on /newroot/work: Operation not permitted";
    expect(named(output)).toBeUndefined();
  });

  it('is never blamed when the network is on, or on the network by domain (servers listen there)', () => {
    expect(named(NODE_LISTEN, { policy: workspaceWrite('enabled') })).toBeUndefined();
    expect(named(PYTHON_HTTP_SERVER, { policy: workspaceWrite('proxied') })).toBeUndefined();
  });
});

describe('nameDenial: connections with the network off', () => {
  it.each([
    ['node net.connect', 'connect EPERM 1.1.1.1:80 - Local (undefined:undefined)', '1.1.1.1'],
    [
      'curl to an address',
      "curl: (7) Failed to connect to 93.184.215.14 port 443 after 0 ms: Couldn't connect to server",
      '93.184.215.14',
    ],
    [
      'curl to a service on the host',
      "curl: (7) Failed to connect to localhost port 5432 after 0 ms: Couldn't connect to server",
      'localhost',
    ],
    ['wget', 'Connecting to 1.1.1.1:80... failed: Operation not permitted.', '1.1.1.1'],
    ['python socket.create_connection', PYTHON_CONNECT, undefined],
  ])('%s', (_tool, output, host) => {
    const result = named(output);
    expect(result?.denial.kind).toBe('network');
    expect(result?.denial.host).toBe(host);
    expect(result?.denial.message).toMatch(/the network is off for sandboxed commands\.$/);
  });

  it('curl failing to connect with the network on is the network, not the sandbox', () => {
    const output =
      "curl: (7) Failed to connect to localhost port 5432 after 0 ms: Couldn't connect to server";
    expect(named(output, { policy: workspaceWrite('enabled'), earlyDenied: true })).toBeUndefined();
  });
});

describe('nameDenial: DNS', () => {
  it.each([
    ['curl', 'curl: (6) Could not resolve host: example.com', 'example.com'],
    [
      'git over https',
      "fatal: unable to access 'https://github.com/x/y/': Could not resolve host: github.com",
      'github.com',
    ],
    ['ssh', 'ssh: Could not resolve hostname github.com: Temporary failure in name resolution', 'github.com'],
    ['node', 'getaddrinfo EAI_AGAIN example.com', 'example.com'],
    [
      'node fetch',
      `} Error: getaddrinfo EAI_AGAIN example.com
    at GetAddrInfoReqWrap.onlookupall [as oncomplete] (node:dns:122:26) {
  errno: -3001,
  code: 'EAI_AGAIN',
  syscall: 'getaddrinfo',
  hostname: 'example.com'
}`,
      'example.com',
    ],
    [
      'wget',
      `--2026-12-03 21:28:46--  https://example.com/
Resolving example.com (example.com)... failed: Temporary failure in name resolution.
wget: unable to resolve host address ‘example.com’`,
      'example.com',
    ],
    [
      'python requests',
      `requests.exceptions.ConnectionError: HTTPSConnectionPool(host='example.com', port=443): Max retries exceeded with url: / (Caused by NameResolutionError("HTTPSConnection(host='example.com', port=443): Failed to resolve 'example.com' ([Errno -2] Name or service not known)"))`,
      'example.com',
    ],
    [
      'python urllib (no host in the message)',
      `  File "/root/.pyenv/versions/3.11.7/lib/python3.11/urllib/request.py", line 1351, in do_open
    raise URLError(err)
urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>`,
      undefined,
    ],
  ])('%s, with the network off', (_tool, output, host) => {
    const result = named(output);
    expect(result?.denial.kind).toBe('dns');
    expect(result?.denial.host).toBe(host);
    expect(result?.denial.message).toBe(
      `The sandbox blocked ${host ? `looking up ${host}` : 'a DNS lookup'}: the network is off for sandboxed commands.`,
    );
    expect(result?.nextStep).toMatch(/require_escalated/);
  });

  it('with the network on, a DNS failure is the network’s, early or late', () => {
    const output = 'curl: (6) Could not resolve host: nonexistent-host-abc.invalid';
    expect(named(output, { policy: workspaceWrite('enabled') })).toBeUndefined();
    expect(named(output, { policy: workspaceWrite('enabled'), earlyDenied: true })).toBeUndefined();
  });

  it('on the network by domain, a direct lookup fails by design: use the proxy', () => {
    const result = named('getaddrinfo EAI_AGAIN example.com', { policy: workspaceWrite('proxied') });
    expect(result?.denial).toEqual({
      kind: 'dns',
      host: 'example.com',
      message:
        "example.com could not be looked up: on the network by domain, commands reach the network only through ux's proxy, which looks names up itself; a command has no DNS of its own.",
    });
    expect(result?.nextStep).toMatch(/HTTPS_PROXY/);
    expect(result?.nextStep).not.toMatch(/require_escalated/);
  });

  it("takes no host from another message's link a few lines away", () => {
    const output = [
      "WARNING: Running pip as the 'root' user can result in broken permissions and conflicting behaviour with the system package manager. It is recommended to use a virtual environment instead: https://pip.pypa.io/warnings/venv",
      'Looking in indexes: file:///opt/pypi/simple',
      'INFO: pip is looking at multiple versions',
      "WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f4b08f243d0>: Failed to establish a new connection: [Errno -2] Name or service not known')': /simple/six/",
    ].join('\n');
    expect(named(output)?.denial).toEqual({
      kind: 'dns',
      message: 'The sandbox blocked a DNS lookup: the network is off for sandboxed commands.',
    });
  });

  it('with escalation, says what the run outside the sandbox gains', () => {
    expect(named('curl: (6) Could not resolve host: example.com')?.nextStep).toBe(
      'If the command needs the network, rerun the command with sandbox_permissions "require_escalated" and a justification (the person is asked; it then runs outside the sandbox, with the network).',
    );
  });

  it('without escalation, says the network is off and nobody can approve', () => {
    const result = named('curl: (6) Could not resolve host: example.com', { canEscalate: false });
    expect(result?.nextStep).toMatch(/^The network is off and nobody can approve more here/);
  });

  it('a command that exited 0 after retrying (pip falling back to a local index) is not named', () => {
    const output =
      "WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f4b08f243d0>: Failed to establish a new connection: [Errno -2] Name or service not known')': /simple/six/\nSuccessfully downloaded six";
    expect(named(output, { exitCode: 0 })).toBeUndefined();
    expect(named(output, { exitCode: 1 })?.denial.kind).toBe('dns');
  });
});

function refusal(
  host: string,
  denial: string | undefined,
  decision: NetworkAccessEvent['decision'] = 'denied',
) {
  return {
    type: 'network_access',
    host,
    port: 443,
    protocol: 'https',
    decision,
    decided_by: decision === 'denied' ? 'policy' : 'ask',
    ...(denial ? { denial } : {}),
    bytes_up: 0,
    bytes_down: 0,
    duration_ms: 1,
  } satisfies NetworkAccessEvent;
}

describe('nameDenial: the network proxy', () => {
  const curl = 'curl: (56) CONNECT tunnel failed, response 403';
  const proxied = () => workspaceWrite('proxied');

  it.each([
    [
      'not_in_allow_list',
      'it is not in the allow list (network.allow)',
      /Ask the person to allow example\.com/,
    ],
    ['deny_list', 'it matches the deny list (network.deny)', /No approval lifts the deny list/],
    [
      'outside_cap',
      "it is outside the allow list the administrator's requirements pin, so nobody here can approve it",
      /administrator/,
    ],
    ['local_address', 'the name leads only to local or private addresses', /listed exactly in network.allow/],
    ['ask_failed', 'nobody could be asked to approve it', /Ask the person to allow example\.com/],
  ])('%s', (reason, because, next) => {
    const result = named(curl, { policy: proxied(), proxyRefusals: [refusal('example.com', reason)] });
    expect(result?.denial).toEqual({
      kind: 'proxy',
      host: 'example.com',
      reason,
      message: `ux's network proxy refused example.com:443: ${because}.`,
    });
    expect(result?.nextStep).toMatch(next);
  });

  it('a no to the question (asked_denied) is a refusal, and is not to be retried', () => {
    const result = named(curl, {
      policy: proxied(),
      proxyRefusals: [refusal('example.com', undefined, 'asked_denied')],
    });
    expect(result?.denial).toMatchObject({
      reason: 'refused',
      message: "ux's network proxy refused example.com:443: it was refused when approval was asked.",
    });
    expect(result?.nextStep).toMatch(/^Do not retry that host/);
  });

  it('names the last refusal and counts the other hosts; a cancelled question is no refusal', () => {
    const result = named(curl, {
      policy: proxied(),
      proxyRefusals: [
        refusal('a.example', 'not_in_allow_list'),
        refusal('b.example', 'deny_list'),
        refusal('c.example', 'cancelled'),
      ],
    });
    expect(result?.denial.host).toBe('b.example');
    expect(result?.denial.message).toMatch(/refused b\.example:443 \(and 1 other host\)/);
  });

  it('an allowed exchange is not a refusal', () => {
    const allowed = { ...refusal('example.org', undefined), decision: 'allowed' as const };
    expect(named('curl: (7) Failed', { policy: proxied(), proxyRefusals: [allowed] })).toBeUndefined();
  });

  it('exit 0: only when the command printed the refusal as its result (curl http://)', () => {
    const events = [refusal('example.com', 'not_in_allow_list')];
    const body =
      'ux: network access to "example.com" is not allowed by the sandbox\'s network policy (it is not in network.allow); add it to network.allow';
    expect(
      named('<html>ok</html>', { exitCode: 0, policy: proxied(), proxyRefusals: events }),
    ).toBeUndefined();
    expect(named(body, { exitCode: 0, policy: proxied(), proxyRefusals: events })?.denial.kind).toBe('proxy');
  });

  it('reads the proxy’s own words when no event came with them', () => {
    const python =
      'urllib.error.URLError: <urlopen error Tunnel connection failed: 403 Blocked by ux network policy: example.com is not in network.allow>';
    expect(named(python, { policy: proxied() })?.denial).toMatchObject({
      kind: 'proxy',
      host: 'example.com',
      reason: 'not_in_allow_list',
    });
    const git = "fatal: unable to access 'https://example.com/x/y/': CONNECT tunnel failed, response 403";
    expect(named(git, { policy: proxied() })?.denial).toMatchObject({ kind: 'proxy', host: 'example.com' });
    // With the network off there is no proxy: a 403 is the destination's.
    expect(named(git)).toBeUndefined();
  });
});

describe('nameDenial: early denials with nothing recognisable', () => {
  it('is a generic denial of the process', () => {
    const result = named('', { earlyDenied: true, exitCode: 159 });
    expect(result?.denial).toEqual({
      kind: 'process',
      message:
        'The sandbox stopped the command as it started (exit code 159); its output names no blocked path or host.',
    });
    expect(result?.nextStep).toMatch(/require_escalated/);
  });

  it('is nothing when the orchestrator saw no denial', () => {
    expect(named('segmentation fault', { exitCode: 139 })).toBeUndefined();
  });
});

describe('nameDenial: on an exec-server', () => {
  const remote = { remote: true, cwd: '/srv/ws-that-is-not-here' } as const;

  it('says where, and judges the remote workspace by the policy alone', () => {
    const result = named("touch: cannot touch '/etc/x': Read-only file system", remote);
    expect(result?.denial.message).toBe(
      'The sandbox on the exec-server blocked a write to /etc/x: it is outside the places this command may write.',
    );
    expect(result?.nextStep).toContain('/srv/ws-that-is-not-here');
  });

  it('protects the names git and agents keep without looking at this machine’s files', () => {
    const result = named('bash: line 1: .git/hooks/pre-commit: Read-only file system', remote);
    expect(result?.denial).toMatchObject({
      kind: 'file_write',
      path: '/srv/ws-that-is-not-here/.git/hooks/pre-commit',
    });
    expect(result?.denial.message).toMatch(/protected/);
    expect(named("touch: cannot touch 'src/a.ts': Permission denied", remote)).toBeUndefined();
  });

  it('names the network as the exec-server’s', () => {
    expect(named('curl: (6) Could not resolve host: example.com', remote)?.denial.message).toBe(
      'The sandbox on the exec-server blocked looking up example.com: the network is off for commands on the exec-server.',
    );
  });
});

describe('nameDenial: reads only the end of a long output', () => {
  const line = "touch: cannot touch '/etc/x': Read-only file system\n";
  const noise = `${'x'.repeat(99)}\n`.repeat(Math.ceil((NAME_DENIAL_SCAN_CHARS + 1000) / 100));

  it('finds a denial at the end of a long output', () => {
    expect(named(noise + line)?.denial.path).toBe('/etc/x');
  });

  it('does not read what lies before the last 64 KiB', () => {
    expect(named(line + noise)).toBeUndefined();
  });
});
