import {
  InvalidArgumentsError,
  isAbsolutePath,
  type LaunchPlan,
  MissingCommandLineError,
  type SandboxEnforcement,
  type SandboxPlanRequest,
  SandboxUnavailableError,
} from '@ux/protocol/core';
import { type FsView, proxyEnvironment } from '@ux/protocol-utils';
import { outerSandboxMarker } from './outer-sandbox.js';
import { renderSeatbeltProfile } from './seatbelt-profile.js';
import { seatbeltRules } from './seatbelt-rules.js';

/** Always the system binary: a `sandbox-exec` found on PATH could be anyone's. */
export const SANDBOX_EXEC_PATH = '/usr/bin/sandbox-exec';

/** Facts about the host the planner needs, injected so plans are deterministic and testable anywhere. */
export interface SeatbeltHostFacts {
  fs: FsView;
  /** The ux host's own environment, checked for an outer sandbox. */
  hostEnv: Readonly<Record<string, string | undefined>>;
  /** A violation-collector tag to attach to every deny. */
  violationTag?: string;
  /**
   * The private temporary directory for a policy with `privateTmp`, or a function that makes it (called
   * only when the policy has one). Absolute, outside every writable root. Without it such a policy is
   * refused. `createSeatbeltSandbox` passes the backend's own directory.
   */
  privateTmpDir?: string | (() => string);
}

/** A launch plan (without cleanup) plus the profile and its parameters, for inspection and golden tests. */
export interface SeatbeltPlan extends Omit<LaunchPlan, 'cleanup'> {
  /** The SBPL text passed with `-p`; empty when the command runs outside Seatbelt (external sandbox). */
  profile: string;
  /** The `-D NAME=value` parameters, in order. */
  parameters: [name: string, value: string][];
}

/**
 * Plans one command under `/usr/bin/sandbox-exec -p <profile> -D<NAME>=<path>… -- argv`. Pure: the only
 * view of the host is `facts`.
 */
export function planSeatbelt(request: SandboxPlanRequest, facts: SeatbeltHostFacts): SeatbeltPlan {
  if (request.argv.length === 0) throw new MissingCommandLineError();
  if (!isAbsolutePath(request.cwd) || !request.cwd.startsWith('/')) {
    throw new InvalidArgumentsError({
      tool: 'sandbox plan',
      issues: [
        { path: 'cwd', message: `must be an absolute macOS path, got ${JSON.stringify(request.cwd)}` },
      ],
    });
  }

  if (request.policy.fileSystem.kind === 'external-sandbox') {
    return {
      argv: [...request.argv],
      cwd: request.cwd,
      env: { ...request.env },
      sandboxType: 'seatbelt',
      enforcement: {
        fileSystem: 'none',
        network: 'none',
        notes: [
          'external-sandbox policy: an outer sandbox enforces it; sandbox-exec cannot run inside another sandbox, so the command runs as is',
        ],
      },
      profile: '',
      parameters: [],
    };
  }

  const outer = outerSandboxMarker(request.env) ?? outerSandboxMarker(facts.hostEnv);
  if (outer !== undefined) {
    throw new SandboxUnavailableError({
      backend: 'seatbelt',
      reason: `already inside a sandbox (${outer}); macOS refuses to nest sandbox-exec ("sandbox_apply: Operation not permitted")`,
      fix: 'run ux outside the outer sandbox, or use the external-sandbox policy so the outer sandbox alone applies',
    });
  }

  const rules = seatbeltRules(
    request,
    facts.fs,
    facts.privateTmpDir === undefined ? {} : { privateTmpDir: facts.privateTmpDir },
  );
  if (rules.network === 'proxied' && rules.proxyLoopbackPort === undefined) {
    throw new SandboxUnavailableError({
      backend: 'seatbelt',
      reason:
        'network "proxied" needs the host\'s proxy to listen on loopback as well (networkProxy.loopbackPort): on macOS Seatbelt cannot bring the proxy\'s unix socket into the sandbox, it can only allow connections to a port on 127.0.0.1',
      fix: 'start the network proxy with a loopback listener too and pass its port as networkProxy.loopbackPort, or set the network "on" or "off"',
    });
  }
  const profile = renderSeatbeltProfile(rules, { tty: request.tty, violationTag: facts.violationTag });
  // The proxy's variables win over the request's: with the network proxied, no other proxy is reachable.
  const env: Record<string, string> = {
    ...request.env,
    ...(rules.network === 'proxied' && rules.proxyLoopbackPort !== undefined
      ? proxyEnvironment({ httpPort: rules.proxyLoopbackPort, platform: 'darwin' })
      : {}),
    UX_SANDBOX: 'seatbelt',
  };
  if (rules.network === 'restricted') env.UX_SANDBOX_NETWORK_DISABLED = '1';
  // The one variable the plan changes: the host's temporary directory is not writable any more.
  if (rules.privateTmp !== undefined) env.TMPDIR = rules.privateTmp;

  const notes: string[] = [];
  if (rules.fileSystem === 'unrestricted')
    notes.push('the file system is not restricted (unrestricted policy)');
  for (const path of rules.missingWritableRoots) {
    notes.push(`writable root ${path} does not exist, so nothing was granted for it`);
  }
  for (const { root, within, why } of rules.ungrantedRoots) {
    const where = root === within ? 'is itself protected' : `lies inside the protected path ${within}`;
    notes.push(`writable root ${root} ${where} (${why}), so nothing was granted for it`);
  }
  if (rules.privateTmp !== undefined) {
    notes.push(
      `private /tmp: commands get their own temporary directory ${rules.privateTmp} (TMPDIR points at it); the host's /tmp (/private/tmp) and $TMPDIR are not writable. Unlike Linux, where it is mounted at /tmp, a program that hard-codes /tmp or asks macOS for the user's temporary directory (confstr _CS_DARWIN_USER_TEMP_DIR) instead of reading TMPDIR cannot write its files`,
    );
  }
  if (rules.hidden.length > 0) {
    notes.push(`ux's own directories are neither readable nor writable: ${rules.hidden.join(', ')}`);
  }
  for (const path of rules.writableHostPaths) {
    notes.push(`${path}, which the launch reads, is or holds a writable root, so it stays writable`);
  }
  if (rules.deniedGlobs.some((glob) => glob.pattern.includes('?'))) {
    notes.push('a `?` in a deny-read glob matches one byte, so it does not match a non-ASCII character');
  }
  if (rules.network === 'proxied') {
    notes.push(
      `network: only the host's proxy on 127.0.0.1:${rules.proxyLoopbackPort} is reachable (HTTP(S)_PROXY and ALL_PROXY point at it); a program that ignores the proxy variables cannot connect anywhere`,
    );
  }
  if (rules.unixSockets.length > 0) {
    notes.push(`unix sockets the command may connect to: ${rules.unixSockets.join(', ')}`);
  }
  const enforcement: SandboxEnforcement = {
    fileSystem: rules.fileSystem === 'restricted' ? 'enforced' : 'none',
    network: 'enforced',
    notes,
  };

  return {
    argv: [
      SANDBOX_EXEC_PATH,
      '-p',
      profile.text,
      ...profile.parameters.map(([name, value]) => `-D${name}=${value}`),
      '--',
      ...request.argv,
    ],
    cwd: request.cwd,
    env,
    sandboxType: 'seatbelt',
    enforcement,
    profile: profile.text,
    parameters: profile.parameters,
  };
}
