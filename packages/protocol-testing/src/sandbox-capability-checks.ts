import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {
  EffectivePolicy,
  LaunchPlan,
  SandboxBackend,
  SandboxCapability,
  SandboxPlanRequest,
} from '@ux/protocol/core';
import { SandboxUnavailableError } from '@ux/protocol/core';
import { ConformanceSkip, check, checkEqual, within } from './conformance-check.js';
import { startPlan } from './start-plan.js';

/** What the runtime checks share with the suite that runs them. */
export interface CapabilityCheckContext {
  shell: string;
  PATH: string;
  createBackend: () => SandboxBackend;
  /** Makes a fresh workspace and an outside directory (canonical, inside the host's temp dir), removes both afterwards. */
  withWorkspace(body: (dirs: { workspace: string; outside: string }) => Promise<void>): Promise<void>;
  /** The workspace-write policy the checks plan under (root readable, the workspace writable). */
  workspaceWrite(network?: 'restricted' | 'enabled'): EffectivePolicy;
  readOnly: EffectivePolicy;
}

/** One runtime check of a declared capability, or (without `capability`) of every backend. */
export interface CapabilityCheck {
  name: string;
  /** Run only when the probe declares it in `enforces`; otherwise reported as skipped, with that reason. */
  capability?: SandboxCapability;
  run: () => Promise<void>;
}

type RunResult = { exitCode: number; output: string };

/**
 * The checks that a backend enforces what its probe declares, each by running real commands under
 * its plans and looking from the host side (the file is unchanged, the listener saw nothing). A plan
 * that refuses with `SandboxUnavailableError` where the backend cannot hold a guarantee for that
 * request (Landlock and an existing `.git` inside a writable root) passes: failing closed is allowed,
 * a silent downgrade is not.
 */
export function sandboxCapabilityChecks(ctx: CapabilityCheckContext): CapabilityCheck[] {
  const { shell, PATH, createBackend, withWorkspace, workspaceWrite } = ctx;
  const node = process.execPath;

  /** Plans `script` (with the backend given, or a new one) and runs it on pipes; cleanup has run when it resolves. */
  async function run(
    policy: EffectivePolicy,
    cwd: string,
    script: string,
    options: { backend?: SandboxBackend; request?: Partial<SandboxPlanRequest> } = {},
  ): Promise<RunResult> {
    const backend = options.backend ?? createBackend();
    const plan = await backend.plan({
      argv: [shell, '-c', script],
      cwd,
      env: { PATH },
      policy,
      tty: false,
      ...options.request,
    });
    try {
      return await startPlan(plan, 15_000).done;
    } finally {
      await plan.cleanup?.();
    }
  }

  /** Like `run`, but a `SandboxUnavailableError` from `plan()` is a refusal (fail closed), not a failure. */
  async function runOrRefusal(
    policy: EffectivePolicy,
    cwd: string,
    script: string,
  ): Promise<RunResult | 'refused'> {
    try {
      return await run(policy, cwd, script);
    } catch (error) {
      if (SandboxUnavailableError.isInstance(error)) return 'refused';
      throw error;
    }
  }

  /** The same script with no sandbox: proves that the probe itself works, so a block means something. */
  function unsandboxed(cwd: string, script: string): Promise<RunResult> {
    const plan: LaunchPlan = {
      argv: [shell, '-c', script],
      cwd,
      env: { PATH },
      sandboxType: 'none',
      enforcement: { fileSystem: 'none', network: 'none', notes: [] },
    };
    return startPlan(plan, 15_000).done;
  }

  /** Writes the network client into `dir`; `client(kind, target, port)` is the shell command that runs it. */
  function netClient(dir: string) {
    const file = join(dir, 'ux-conformance-net-client.cjs');
    writeFileSync(file, NET_CLIENT);
    return (kind: 'tcp' | 'udp' | 'unix' | 'proxy', target: string, port = 0) =>
      `'${node}' '${file}' ${kind} '${target}' ${port}`;
  }

  const withPolicy = (policy: EffectivePolicy, change: (p: EffectivePolicy) => void): EffectivePolicy => {
    const copy = structuredClone(policy);
    change(copy);
    return copy;
  };
  const addEntry = (policy: EffectivePolicy, path: string, access: 'read' | 'write' | 'none') =>
    withPolicy(policy, (p) => {
      if (p.fileSystem.kind === 'restricted')
        p.fileSystem.entries.push({ path: { type: 'path', path }, access });
    });

  return [
    // write_limits
    {
      name: 'write_limits: blocks writes outside the writable roots',
      capability: 'write_limits',
      run: () =>
        withWorkspace(async ({ workspace, outside }) => {
          const target = join(outside, 'escaped.txt');
          const result = await run(workspaceWrite(), workspace, `echo escaped > '${target}'`);
          check(result.exitCode !== 0, 'writing outside the workspace should fail');
          check(!existsSync(target), `${target} was created on the host`);
          const verdict = createBackend().classifyDenial?.({
            exitCode: result.exitCode,
            output: result.output,
          });
          check(
            verdict !== 'not_denied',
            `the backend's classifier called a blocked write "not_denied": ${result.output}`,
          );
        }),
    },
    {
      name: 'write_limits: blocks writes through a symlink in the workspace that leads outside',
      capability: 'write_limits',
      run: () =>
        withWorkspace(async ({ workspace, outside }) => {
          // A junction on Windows: it needs no privilege.
          symlinkSync(outside, join(workspace, 'link'), process.platform === 'win32' ? 'junction' : 'dir');
          const result = await run(
            workspaceWrite(),
            workspace,
            'echo escaped > link/through-link.txt; mkdir link/made-dir',
          );
          check(!existsSync(join(outside, 'through-link.txt')), 'a write through the link landed outside');
          check(!existsSync(join(outside, 'made-dir')), 'a directory made through the link landed outside');
          check(result.exitCode !== 0, 'writing through the link should fail');
        }),
    },
    {
      name: 'write_limits: blocks writes in the working directory under read-only',
      capability: 'write_limits',
      run: () =>
        withWorkspace(async ({ workspace }) => {
          const result = await run(ctx.readOnly, workspace, 'echo no > blocked.txt');
          check(result.exitCode !== 0, 'writing under read-only should fail');
          check(!existsSync(join(workspace, 'blocked.txt')), 'blocked.txt was created on the host');
        }),
    },

    // protected_names
    {
      name: 'protected_names: an existing .git config, hooks and .ux inside a writable root stay read-only (or the plan refuses)',
      capability: 'protected_names',
      run: () =>
        withWorkspace(async ({ workspace }) => {
          const config = '[core]\n\trepositoryformatversion = 0\n';
          mkdirSync(join(workspace, '.git', 'hooks'), { recursive: true });
          mkdirSync(join(workspace, '.git', 'objects'));
          mkdirSync(join(workspace, '.git', 'refs'));
          writeFileSync(join(workspace, '.git', 'HEAD'), 'ref: refs/heads/main\n');
          writeFileSync(join(workspace, '.git', 'config'), config);
          mkdirSync(join(workspace, '.ux'));
          writeFileSync(join(workspace, '.ux', 'AGENTS.md'), 'original\n');
          const result = await runOrRefusal(
            workspaceWrite(),
            workspace,
            [
              'echo ok > normal.txt',
              'printf "[core]\\n\\tfsmonitor = /tmp/evil\\n" >> .git/config',
              'echo evil > .git/hooks/pre-commit',
              'echo evil > .ux/AGENTS.md',
              'rm -f .git/config',
              'mv .ux .ux-moved',
              'mv .git .git-moved',
              'true',
            ].join('; '),
          );
          if (result === 'refused') return;
          checkEqual(
            readFileSync(join(workspace, 'normal.txt'), 'utf8'),
            'ok\n',
            'normal.txt in the writable root (the root must stay writable around protected names)',
          );
          check(existsSync(join(workspace, '.git', 'config')), '.git/config was removed or moved away');
          checkEqual(readFileSync(join(workspace, '.git', 'config'), 'utf8'), config, '.git/config');
          check(!existsSync(join(workspace, '.git', 'hooks', 'pre-commit')), 'a git hook was planted');
          check(existsSync(join(workspace, '.ux', 'AGENTS.md')), '.ux/AGENTS.md was removed or moved away');
          checkEqual(
            readFileSync(join(workspace, '.ux', 'AGENTS.md'), 'utf8'),
            'original\n',
            '.ux/AGENTS.md',
          );
        }),
    },
    {
      name: "protected_names: ux's own state inside a writable root (hostState.readOnly) stays read-only (or the plan refuses)",
      capability: 'protected_names',
      run: () =>
        withWorkspace(async ({ workspace }) => {
          const home = join(workspace, 'ux-home');
          mkdirSync(home);
          writeFileSync(join(home, 'config.toml'), 'sandbox_mode = "workspace-write"\n');
          const policy = withPolicy(workspaceWrite(), (p) => {
            p.hostState = { readOnly: [home] };
          });
          const result = await runOrRefusal(
            policy,
            workspace,
            [
              'echo ok > normal.txt',
              'echo \'sandbox_mode = "danger-full-access"\' >> ux-home/config.toml',
              'echo evil > ux-home/rules.toml',
              'rm -f ux-home/config.toml',
              'mv ux-home ux-home-moved',
              'true',
            ].join('; '),
          );
          if (result === 'refused') return;
          checkEqual(
            readFileSync(join(workspace, 'normal.txt'), 'utf8'),
            'ok\n',
            'normal.txt in the writable root (the root must stay writable around protected names)',
          );
          check(existsSync(join(home, 'config.toml')), "ux's config.toml was removed or moved away");
          checkEqual(
            readFileSync(join(home, 'config.toml'), 'utf8'),
            'sandbox_mode = "workspace-write"\n',
            "ux's config.toml",
          );
          check(!existsSync(join(home, 'rules.toml')), "a file was added to ux's state directory");
        }),
    },
    {
      name: 'protected_names: what a command plants in a .git or .ux it creates inside a writable root does not survive',
      capability: 'protected_names',
      run: () =>
        withWorkspace(async ({ workspace }) => {
          const result = await run(
            workspaceWrite(),
            workspace,
            [
              'echo ok > normal.txt',
              'mkdir .ux && echo evil > .ux/AGENTS.md',
              'mkdir -p .git/hooks .git/objects .git/refs && echo "ref: refs/heads/main" > .git/HEAD',
              'printf "[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = /tmp/evil\\n" > .git/config',
              'printf "#!/bin/sh\\necho evil\\n" > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit',
              'true',
            ].join('; '),
          );
          checkEqual(
            readFileSync(join(workspace, 'normal.txt'), 'utf8'),
            'ok\n',
            `normal.txt in the writable root (output ${JSON.stringify(result.output)})`,
          );
          // Taken away whole (a .ux), or kept with only what git itself writes (a new repository).
          const read = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8') : '');
          check(
            !read(join(workspace, '.ux', 'AGENTS.md')).includes('evil'),
            'the .ux/AGENTS.md the command created is still in the workspace',
          );
          check(
            !read(join(workspace, '.git', 'config')).includes('fsmonitor'),
            'the .git/config the command created, naming a program git runs, is still in the workspace',
          );
          check(
            !existsSync(join(workspace, '.git', 'hooks', 'pre-commit')),
            'the git hook the command planted in a new .git is still in the workspace',
          );
        }),
    },

    // read_deny
    {
      name: 'read_deny: hides a deny-read path from reads',
      capability: 'read_deny',
      run: () =>
        withWorkspace(async ({ workspace, outside }) => {
          const secret = join(outside, 'secret.txt');
          writeFileSync(secret, 'top-secret-value');
          const result = await run(addEntry(workspaceWrite(), outside, 'none'), workspace, `cat '${secret}'`);
          check(!result.output.includes('top-secret-value'), 'a deny-read file was readable');
          check(result.exitCode !== 0, 'reading a deny-read file should fail');
        }),
    },
    {
      name: "read_deny: hides ux's hidden directories (hostState.hidden)",
      capability: 'read_deny',
      run: () =>
        withWorkspace(async ({ workspace, outside }) => {
          const hidden = join(outside, 'ux-runtime');
          mkdirSync(hidden);
          writeFileSync(join(hidden, 'control.token'), 'hidden-state-value');
          const policy = withPolicy(workspaceWrite(), (p) => {
            p.hostState = { hidden: [hidden] };
          });
          const result = await run(policy, workspace, `cat '${hidden}/control.token'; ${list(hidden)}`);
          check(
            !result.output.includes('hidden-state-value'),
            "a file in ux's hidden directory was readable",
          );
          check(
            !listing(result.output).includes('control.token'),
            `the names in ux's hidden directory were listed: ${listing(result.output)}`,
          );
        }),
    },
    {
      name: 'read_deny: a deny-read path inside a writable root is unreadable (or the plan refuses)',
      capability: 'read_deny',
      run: () =>
        withWorkspace(async ({ workspace }) => {
          const secrets = join(workspace, 'secrets');
          mkdirSync(secrets);
          writeFileSync(join(secrets, 'key'), 'inner-secret-value');
          const result = await runOrRefusal(
            addEntry(workspaceWrite(), secrets, 'none'),
            workspace,
            `cat secrets/key; ${list('secrets')}; echo ok > normal.txt`,
          );
          if (result === 'refused') return;
          check(
            !result.output.includes('inner-secret-value'),
            'a deny-read file inside the workspace was readable',
          );
          check(
            !listing(result.output).includes('key'),
            `the names in a deny-read directory were listed: ${listing(result.output)}`,
          );
          check(existsSync(join(workspace, 'normal.txt')), 'the rest of the workspace did not stay writable');
        }),
    },

    // network_off
    {
      name: 'network_off: blocks TCP to a host listener when the network is restricted, and allows it when enabled',
      capability: 'network_off',
      run: () =>
        withWorkspace(async ({ workspace }) => {
          const client = netClient(workspace);
          const listener = await listen((server) => server.listen(0, '127.0.0.1'), 'hello-from-host');
          try {
            const script = client('tcp', '127.0.0.1', listener.port());
            const blocked = await run(workspaceWrite('restricted'), workspace, script);
            check(!blocked.output.includes('hello-from-host'), `the connection succeeded: ${blocked.output}`);
            check(
              blocked.exitCode !== 0,
              `the client exited 0 under a restricted network: ${blocked.output}`,
            );
            checkEqual(
              listener.connections(),
              0,
              'connections the listener accepted under a restricted network',
            );
            const allowed = await run(workspaceWrite('enabled'), workspace, script);
            check(
              allowed.output.includes('hello-from-host'),
              `the connection failed under an enabled network: ${allowed.output}`,
            );
          } finally {
            await listener.close();
          }
        }),
    },
    {
      name: 'network_off: blocks UDP to a host socket when the network is restricted',
      capability: 'network_off',
      run: () =>
        withWorkspace(async ({ workspace }) => {
          const client = netClient(workspace);
          const received: string[] = [];
          const waiters = new Set<() => void>();
          const server = createSocket('udp4');
          server.on('message', (message) => {
            received.push(message.toString('utf8'));
            for (const waiter of waiters) waiter();
          });
          const arrived = (text: string) =>
            within(
              10_000,
              new Promise<void>((resolve) => {
                const test = () => {
                  if (received.includes(text)) {
                    waiters.delete(test);
                    resolve();
                  }
                };
                waiters.add(test);
                test();
              }),
              `the datagram ${JSON.stringify(text)} (received ${JSON.stringify(received)})`,
            );
          await new Promise<void>((resolve) => server.bind(0, '127.0.0.1', resolve));
          const port = server.address().port;
          const sender = createSocket('udp4');
          try {
            const script = client('udp', '127.0.0.1', port);
            // The client works: unsandboxed, its datagram arrives.
            await unsandboxed(workspace, script);
            await arrived('udp-from-client');
            received.length = 0;
            const blocked = await run(workspaceWrite('restricted'), workspace, script);
            // Datagrams on the loopback arrive in order: once a marker sent now has arrived, any datagram
            // the sandboxed client got out has arrived before it.
            sender.send('marker', port, '127.0.0.1');
            await arrived('marker');
            check(
              !received.includes('udp-from-client'),
              `a datagram from the sandbox reached the host (client output ${JSON.stringify(blocked.output)})`,
            );
          } finally {
            sender.close();
            await new Promise<void>((resolve) => server.close(() => resolve()));
          }
        }),
    },
    {
      name: 'network_off: blocks connecting to a unix socket of the host (a path) when the network is restricted',
      capability: 'network_off',
      run: () =>
        withWorkspace(async ({ workspace, outside }) => {
          const client = netClient(workspace);
          const path = join(outside, 'host.sock');
          const listener = await listen((server) => server.listen(path), 'hello-from-host');
          try {
            const script = client('unix', path);
            const control = await unsandboxed(workspace, script);
            check(control.output.includes('hello-from-host'), `the client does not work: ${control.output}`);
            const before = listener.connections();
            const blocked = await run(workspaceWrite('restricted'), workspace, script);
            check(
              !blocked.output.includes('hello-from-host'),
              `the sandboxed command talked to the host's socket ${path}: ${blocked.output}`,
            );
            checkEqual(listener.connections() - before, 0, "connections the host's unix socket accepted");
          } finally {
            await listener.close();
          }
        }),
    },
    ...(process.platform === 'linux'
      ? [
          {
            name: 'network_off: blocks connecting to an abstract unix socket of the host when the network is restricted',
            capability: 'network_off' as const,
            run: () =>
              withWorkspace(async ({ workspace }) => {
                const client = netClient(workspace);
                const name = `ux-conformance-${randomBytes(6).toString('hex')}`;
                const listener = await listen((server) => server.listen(`\0${name}`), 'hello-from-host');
                try {
                  const script = client('unix', `@${name}`);
                  const control = await unsandboxed(workspace, script);
                  check(
                    control.output.includes('hello-from-host'),
                    `the client does not work: ${control.output}`,
                  );
                  const before = listener.connections();
                  const blocked = await run(workspaceWrite('restricted'), workspace, script);
                  check(
                    !blocked.output.includes('hello-from-host'),
                    `the sandboxed command talked to the host's abstract socket @${name}: ${blocked.output}`,
                  );
                  checkEqual(listener.connections() - before, 0, 'connections the abstract socket accepted');
                } finally {
                  await listener.close();
                }
              }),
          },
        ]
      : []),

    // unix_socket_control
    {
      name: 'unix_socket_control: allowUnixSockets reaches the listed host socket and no other',
      capability: 'unix_socket_control',
      run: () =>
        withWorkspace(async ({ workspace, outside }) => {
          const client = netClient(workspace);
          const allowedPath = join(outside, 'allowed.sock');
          const otherPath = join(outside, 'other.sock');
          const allowed = await listen((server) => server.listen(allowedPath), 'hello-allowed');
          const other = await listen((server) => server.listen(otherPath), 'hello-other');
          try {
            const policy = withPolicy(workspaceWrite('restricted'), (p) => {
              p.allowUnixSockets = [allowedPath];
            });
            const result = await run(
              policy,
              workspace,
              `${client('unix', allowedPath)}; ${client('unix', otherPath)}`,
            );
            check(
              result.output.includes('hello-allowed'),
              `the listed socket was not reachable: ${result.output}`,
            );
            check(
              !result.output.includes('hello-other'),
              `a socket that was not listed was reachable: ${result.output}`,
            );
            checkEqual(other.connections(), 0, 'connections the unlisted socket accepted');
          } finally {
            await allowed.close();
            await other.close();
          }
        }),
    },

    // private_tmp
    {
      name: "private_tmp: /tmp and $TMPDIR are the session's own: the host's cannot be read, what is written stays inside and is shared by its commands",
      capability: 'private_tmp',
      run: () =>
        withWorkspace(async ({ workspace }) => {
          const name = `ux-conformance-${randomBytes(6).toString('hex')}`;
          const hostDirs = [...new Set(['/tmp', tmpdir()])].filter((dir) => existsSync(dir));
          for (const dir of hostDirs) writeFileSync(join(dir, `${name}-host`), 'host-tmp-value');
          try {
            // Workspace-write as ux makes it: /tmp and $TMPDIR writable, which privateTmp replaces.
            const policy = withPolicy(workspaceWrite(), (p) => {
              p.privateTmp = true;
              if (p.fileSystem.kind === 'restricted')
                p.fileSystem.entries.push(
                  { path: { type: 'special', value: 'slash_tmp' }, access: 'write' },
                  { path: { type: 'special', value: 'tmpdir' }, access: 'write' },
                );
            });
            // One backend for both commands: the private /tmp belongs to the session.
            const backend = createBackend();
            const request = { env: { PATH, TMPDIR: tmpdir() } };
            const first = await run(
              policy,
              workspace,
              `cat /tmp/${name}-host "$TMPDIR/${name}-host"; echo inner-value > "\${TMPDIR:-/tmp}/${name}-inner" && echo WROTE; echo direct > /tmp/${name}-direct`,
              { backend, request },
            );
            check(
              !first.output.includes('host-tmp-value'),
              "a file in the host's /tmp or $TMPDIR was readable",
            );
            check(first.output.includes('WROTE'), `writing into $TMPDIR failed: ${first.output}`);
            for (const dir of hostDirs)
              check(
                !existsSync(join(dir, `${name}-inner`)),
                `a file written into $TMPDIR landed in the host's ${dir}`,
              );
            check(!existsSync(`/tmp/${name}-direct`), "a file written into /tmp landed in the host's /tmp");
            const second = await run(policy, workspace, `cat "\${TMPDIR:-/tmp}/${name}-inner"`, {
              backend,
              request,
            });
            check(
              second.output.includes('inner-value'),
              `the next command of the session did not see the file: ${second.output}`,
            );
          } finally {
            for (const dir of hostDirs)
              for (const suffix of ['host', 'inner', 'direct'])
                rmSync(join(dir, `${name}-${suffix}`), { force: true });
          }
        }),
    },

    // process_isolation
    {
      name: 'process_isolation: host processes cannot be seen or signalled from inside',
      capability: 'process_isolation',
      run: () =>
        withWorkspace(async ({ workspace }) => {
          const host = spawn('sleep', ['300'], { stdio: 'ignore' });
          const exited = new Promise((resolve) => host.once('exit', resolve));
          try {
            const pid = host.pid!;
            const script = `kill -0 ${pid} 2>/dev/null && echo SIGNALLABLE-${pid}; test -e /proc/${pid}/cmdline && echo VISIBLE-${pid}; true`;
            const control = await unsandboxed(workspace, script);
            check(
              control.output.includes(`SIGNALLABLE-${pid}`),
              `the probe does not work: ${control.output}`,
            );
            const result = await run(workspaceWrite(), workspace, script);
            check(
              !result.output.includes(`SIGNALLABLE-${pid}`),
              `host process ${pid} could be signalled from inside`,
            );
            check(
              !result.output.includes(`VISIBLE-${pid}`),
              `host process ${pid} was visible in /proc inside`,
            );
          } finally {
            host.kill('SIGKILL');
            await exited;
          }
        }),
    },

    // Not checked here: what the suite cannot set up alone, said rather than passed.
    // network_by_domain
    {
      name: "network_by_domain: under a proxied network the host's proxy is reachable through the proxy variables, and nothing else",
      capability: 'network_by_domain',
      run: () =>
        withWorkspace(async ({ workspace, outside }) => {
          const client = netClient(workspace);
          // A stand-in for the host's proxy: it greets every connection, on its Unix socket and its
          // loopback port (backends that cannot bridge a socket use the port).
          const proxySocket = join(outside, 'proxy.sock');
          const proxyOnSocket = await listen((server) => server.listen(proxySocket), 'hello-from-proxy');
          const proxyOnPort = await listen((server) => server.listen(0, '127.0.0.1'), 'hello-from-proxy');
          const elsewhere = await listen((server) => server.listen(0, '127.0.0.1'), 'hello-from-elsewhere');
          try {
            const policy = withPolicy(workspaceWrite('restricted'), (p) => {
              p.network = 'proxied';
              p.networkProxy = { unixSocket: proxySocket, loopbackPort: proxyOnPort.port() };
            });
            const result = await run(
              policy,
              workspace,
              `${client('proxy', '')}; ${client('tcp', '127.0.0.1', elsewhere.port())}`,
            );
            check(
              result.output.includes('hello-from-proxy'),
              `the proxy was not reachable through HTTPS_PROXY/HTTP_PROXY/ALL_PROXY: ${result.output}`,
            );
            check(
              !result.output.includes('hello-from-elsewhere'),
              `a direct connection to a host listener succeeded: ${result.output}`,
            );
            checkEqual(elsewhere.connections(), 0, 'connections the other host listener accepted');
          } finally {
            await proxyOnSocket.close();
            await proxyOnPort.close();
            await elsewhere.close();
          }
        }),
    },
    {
      name: 'resource_limits: not checked by this suite (the limits are the backend’s own settings)',
      capability: 'resource_limits',
      run: async () => {
        throw new ConformanceSkip('resource limits depend on the backend’s settings');
      },
    },

    // Every backend.
    {
      name: 'keepFds: a descriptor named in keepFds reaches the command, open as the host left it',
      run: async () => {
        if (process.platform === 'win32')
          throw new ConformanceSkip('inherited descriptors do not exist on Windows');
        await withWorkspace(async ({ workspace }) => {
          const fd = 37;
          const backend = createBackend();
          const plan = await backend.plan({
            argv: [shell, '-c', `'${node}' -e 'require("fs").writeSync(${fd}, "kept-fd-ok")'`],
            cwd: workspace,
            env: { PATH },
            policy: workspaceWrite(),
            tty: false,
            keepFds: [fd],
          });
          try {
            const result = await runWithFd(plan, fd);
            checkEqual(result.exitCode, 0, `exit code (output ${JSON.stringify(result.output)})`);
            checkEqual(result.kept, 'kept-fd-ok', `what the command wrote to descriptor ${fd}`);
          } finally {
            await plan.cleanup?.();
          }
        });
      },
    },
  ];
}

/** A shell command that prints `LISTING:` and what `ls -A` shows of `dir`, on one line. */
function list(dir: string): string {
  return `echo "LISTING:$(ls -A '${dir}' 2>/dev/null | tr '\\n' ' ')"`;
}
/** The `LISTING:` line a script printed. */
function listing(output: string): string {
  return /^LISTING:(.*)$/m.exec(output)?.[1] ?? '';
}

/** A host stream listener that answers every connection with `greeting` and counts them. */
async function listen(start: (server: Server) => void, greeting: string) {
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    socket.on('error', () => {});
    socket.end(`${greeting}\n`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
    start(server);
  });
  return {
    port: () => (server.address() as { port: number }).port,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Runs a plan on pipes with one more pipe at descriptor `fd`; returns what arrived there too. */
function runWithFd(plan: LaunchPlan, fd: number): Promise<RunResult & { kept: string }> {
  const stdio: ('ignore' | 'pipe')[] = ['ignore', 'pipe', 'pipe'];
  while (stdio.length < fd) stdio.push('ignore');
  stdio.push('pipe');
  const child = spawn(plan.argv[0]!, plan.argv.slice(1), { cwd: plan.cwd, env: plan.env, stdio });
  let output = '';
  let kept = '';
  child.stdout!.on('data', (data: Buffer) => {
    output += data.toString('utf8');
  });
  child.stderr!.on('data', (data: Buffer) => {
    output += data.toString('utf8');
  });
  (child.stdio[fd] as NodeJS.ReadableStream).on('data', (data: Buffer) => {
    kept += data.toString('utf8');
  });
  const safety = setTimeout(() => child.kill('SIGKILL'), 15_000);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(safety);
      resolve({ exitCode: code ?? 128, output, kept });
    });
  });
}

/**
 * The network client the checks run inside the sandbox: `tcp HOST PORT`, `unix PATH` (`@name` for an
 * abstract socket) and `proxy` (where HTTPS_PROXY, HTTP_PROXY or ALL_PROXY point) print what the
 * listener sends and exit 0, or print the error and exit 3; `udp HOST PORT` sends one datagram.
 */
const NET_CLIENT = `'use strict';
const [kind, target, port] = process.argv.slice(2);
if (kind === 'udp') {
  const socket = require('dgram').createSocket('udp4');
  socket.send('udp-from-client', Number(port), target, (error) => {
    console.log(error ? 'send-error ' + error.code : 'sent');
    socket.close();
  });
} else {
  const net = require('net');
  let where;
  if (kind === 'proxy') {
    const variable = process.env.HTTPS_PROXY || process.env.HTTP_PROXY || process.env.ALL_PROXY;
    if (!variable) { console.log('no-proxy-variable'); process.exit(4); }
    const url = new URL(variable);
    where = [Number(url.port), url.hostname];
  } else if (kind === 'tcp') where = [Number(port), target];
  else where = [target.startsWith('@') ? '\\0' + target.slice(1) : target];
  const socket = net.connect(...where);
  socket.on('data', (data) => { process.stdout.write(data); process.exit(0); });
  socket.on('error', (error) => { console.log('connect-error ' + error.code); process.exit(3); });
}
`;
