import { homedir } from 'node:os';
import { join } from 'node:path';
import { localSpawnerForPlatform } from '@ux/door';
import { createSandboxSelector } from '@ux/orchestrator';
import { ConfigError, type SandboxBackend, type SandboxProbe, UxError } from '@ux/protocol/core';
import { probeSafely } from '@ux/protocol-utils';
import type { LocalSpawner } from '@ux/spawn';
import { type CliSession, effectivePolicyFor, loadCliSession } from './cli-session.js';
import { configPaths, everyConfigurationError } from './config-files.js';
import { doctorConfigChecks, doctorRuleChecks } from './doctor-config-checks.js';
import { doctorEnvironmentChecks } from './doctor-environment-checks.js';
import { doctorNetworkChecks } from './doctor-network-checks.js';
import { doctorReviewChecks } from './doctor-review-checks.js';
import { doctorShellSnapshotCheck } from './doctor-shell-snapshot-check.js';
import { doctorTrustChecks } from './doctor-trust-checks.js';
import { doctorZshForkCheck } from './doctor-zsh-fork-check.js';
import type { Io } from './io.js';
import { parseConfigArguments } from './parse-config-arguments.js';
import { parseOptions } from './parse-options.js';
import { createCliSandboxRegistry, pluginBackend } from './sandbox-backends.js';
import { protectSession } from './session-protection.js';
import { UsageError } from './usage-error.js';

export const DOCTOR_HELP = `Usage: ux doctor [--profile NAME] [-c KEY=VALUE]... [--json]

Checks what ux needs here: Node, node-pty (and job objects on Windows), the config and requirements
files, the rule files, the paths and backend ids the config names, the network sandboxed commands get
(off, on, or by domain with its lists) and the unix sockets they may reach, each with where it was set, every sandbox
backend (found, version, features, whether a real sandbox starts), ux's runtime directory, whether
/tmp is private, the repositories found in the writable roots, and every configured remote
environment (reachable, which server, whether it applies sandboxes). Exits 1 when ux cannot run as configured (every ux exec would
fail), and says how to fix it; what ux runs without (a writable root that does not exist) is a
warning.

  --profile NAME          check with [profiles.NAME] from the config
  -c, --config KEY=VALUE  check with a config.toml key set for this run (repeatable)
  --json                  machine-readable output
`;

export interface DoctorCheck {
  name: string;
  /** `fail`: ux cannot run as configured; `warn`: it runs, but something configured is left out. */
  status: 'ok' | 'fail' | 'warn' | 'skip';
  detail: string;
  fix?: string;
}

export async function doctorCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseOptions(
    args,
    {
      json: { type: 'boolean' },
      profile: { type: 'string' },
      config: { type: 'string', short: 'c', multiple: true },
      help: { type: 'boolean', short: 'h' },
    },
    'ux doctor --help',
  );
  if (values.help) {
    io.stdout(DOCTOR_HELP);
    return 0;
  }
  if (positionals.length > 0)
    throw new UsageError(`unexpected argument "${positionals[0]}"`, 'ux doctor --help');

  const configOverrides = parseConfigArguments(values.config, 'ux doctor --help');
  const checks: DoctorCheck[] = [];
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  checks.push(
    major > 20 || (major === 20 && minor >= 19)
      ? { name: 'node', status: 'ok', detail: process.versions.node }
      : { name: 'node', status: 'fail', detail: process.versions.node, fix: 'install Node 20.19 or newer' },
  );
  checks.push(...(await checkPty(io.platform)));

  const paths = configPaths(io.env);
  let session: CliSession | undefined;
  // Every mistake in config.toml and the requirements at once, each at its file:line, rather than
  // the first one loadCliSession throws.
  const configErrors = everyConfigurationError(io.env, configOverrides);
  for (const error of configErrors)
    checks.push({
      name: error.file === paths.requirements ? 'requirements' : 'config',
      status: 'fail',
      detail: error.message,
      fix: 'correct the file at the position named',
    });
  if (configErrors.length === 0) {
    try {
      session = loadCliSession(io, {
        ...(values.profile === undefined ? {} : { profile: values.profile }),
        configOverrides,
      });
      const { user, requirements } = session.configuration;
      checks.push({
        name: 'config',
        status: 'ok',
        detail: user ? `${paths.userConfig}: parsed` : `${paths.userConfig}: not present, defaults apply`,
      });
      checks.push({
        name: 'requirements',
        status: 'ok',
        detail: requirements
          ? `${paths.requirements}: parsed`
          : `${paths.requirements}: not present, nothing is pinned`,
      });
      // What every command would print as `ux: warning: …` (a deprecated key, a plugin for another platform).
      for (const warning of session.warnings)
        checks.push({ name: 'config', status: 'warn', detail: warning });
    } catch (error) {
      if (!ConfigError.isInstance(error) && !UxError.isInstance(error)) throw error;
      checks.push({
        name: 'configuration',
        status: 'fail',
        detail: error.message,
        fix: 'correct the file at the position named',
      });
    }
  }
  // Without a session the rule files of $UX_HOME/rules are still checked, so one run names them too.
  if (!session)
    checks.push(...(await doctorRuleChecks({ directory: join(paths.home, 'rules'), files: [] }, io.env)));

  if (session) {
    const { settings } = session;
    const approval = settings.approvalPolicy.value;
    checks.push({
      name: 'approval policy',
      status: 'ok',
      detail: `${typeof approval === 'string' ? approval : 'granular'} (${settings.approvalPolicy.source})`,
    });
    checks.push(...doctorReviewChecks(session, io.env));
    checks.push({
      name: 'sandbox mode',
      status: 'ok',
      detail: `${settings.sandboxMode.value} (${settings.sandboxMode.source})`,
    });
    checks.push(...doctorNetworkChecks(session));
    checks.push(
      ...doctorTrustChecks(session, {
        cwd: process.cwd(),
        homeDir: io.env.HOME || homedir(),
        env: io.env,
      }),
    );
    checks.push({
      name: 'feature mode',
      status: 'ok',
      detail: `${session.toolPlan.mode}: tools ${session.toolPlan.tools.join(', ')}`,
    });
    checks.push(await doctorZshForkCheck(session, io));
    checks.push(...(await doctorConfigChecks(session, io)));
    const enabled = settings.enabledBackends?.value;
    checks.push(...(await doctorBackendChecks(session)));
    const mode = settings.sandboxMode.value;
    let chosenBackend: SandboxBackend | undefined;
    if (mode === 'read-only' || mode === 'workspace-write') {
      try {
        const selector = createSandboxSelector({
          sandboxRegistry: createCliSandboxRegistry(session.sandboxPlugins, enabled, session.sandboxHost),
          platform: io.platform,
          enabledBackends: enabled,
          allowedBackends: settings.allowedBackends,
        });
        // The session's own policy (what `ux exec` and `ux mcp` would apply here): the backend chosen is
        // the first that enforces everything it needs, as for real commands.
        const place = { cwd: process.cwd(), homeDir: io.env.HOME || homedir() };
        const policy = protectSession(effectivePolicyFor(session, place), session, {
          ...place,
          env: io.env,
        }).policy;
        const chosen = await selector.select(policy);
        chosenBackend = chosen;
        checks.push({ name: `sandbox for ${mode}`, status: 'ok', detail: `${chosen.id} will be used` });
      } catch (error) {
        if (!UxError.isInstance(error)) throw error;
        const fix = (error as UxError & { fix?: string }).fix;
        checks.push({
          name: `sandbox for ${mode}`,
          status: 'fail',
          detail: error.message,
          ...(fix ? { fix } : {}),
        });
      }
    } else {
      checks.push({
        name: `sandbox for ${mode}`,
        status: 'ok',
        detail: 'no sandbox is applied in this mode',
      });
    }
    checks.push(await doctorShellSnapshotCheck(session, io, chosenBackend));
    checks.push(...(await doctorEnvironmentChecks(session, io)));
  }

  const ok = checks.every((check) => check.status !== 'fail');
  if (values.json) io.stdout(`${JSON.stringify({ ok, checks }, null, 2)}\n`);
  else {
    const width = Math.max(...checks.map((check) => check.name.length));
    for (const check of checks) {
      io.stdout(`${check.status.padEnd(4)}  ${check.name.padEnd(width)}  ${check.detail}\n`);
      if (check.fix) io.stdout(`${''.padEnd(6 + width)}  fix: ${check.fix}\n`);
    }
    const warned = checks.some((check) => check.status === 'warn');
    io.stdout(
      !ok
        ? 'ux cannot run as configured here; see the fixes above.\n'
        : warned
          ? 'ux can run here; see the warnings above.\n'
          : 'ux can run here.\n',
    );
  }
  return ok ? 0 : 1;
}

/**
 * Whether a terminal starts. On Windows the spawner needs job objects first: without them it refuses to
 * start anything, which is reported here (a failed check, with its fix) rather than thrown.
 */
async function checkPty(platform: NodeJS.Platform): Promise<DoctorCheck[]> {
  let spawner: LocalSpawner;
  try {
    spawner = await localSpawnerForPlatform({ platform });
  } catch (error) {
    return [
      {
        name: 'job objects',
        status: 'fail',
        detail: error instanceof Error ? error.message : String(error),
        fix: 'reinstall ux so koffi (used by @ux/sandbox-windows-token) installs its Windows binary',
      },
    ];
  }
  const jobObjects: DoctorCheck[] =
    platform === 'win32'
      ? [{ name: 'job objects', status: 'ok', detail: 'ending a command ends everything it started' }]
      : [];
  return [...jobObjects, await checkTerminal(spawner)];
}

async function checkTerminal(spawner: LocalSpawner): Promise<DoctorCheck> {
  try {
    const child = await spawner.spawn({
      argv: ['true'],
      cwd: '/',
      env: { PATH: '/usr/bin:/bin' },
      tty: true,
      stdin: 'closed',
    });
    await child.closed;
    const status = child.exitStatus();
    return status?.exitCode === 0
      ? { name: 'node-pty', status: 'ok', detail: 'a terminal starts' }
      : {
          name: 'node-pty',
          status: 'fail',
          detail: `a command in a terminal exited with ${status?.exitCode}`,
          fix: 'reinstall ux (node-pty builds on install)',
        };
  } catch (error) {
    return {
      name: 'node-pty',
      status: 'fail',
      detail: error instanceof Error ? error.message : String(error),
      fix: 'reinstall ux so node-pty can build (it needs a C++ compiler and python3)',
    };
  }
}

/** The suggestion for a host where bubblewrap cannot start. */
export const LANDLOCK_SUGGESTION =
  'or, where bubblewrap cannot run (no unprivileged user namespaces: AppArmor, containers, CI), use Landlock: add sandbox_plugins = ["@ux/sandbox-landlock"] to config.toml';

/**
 * One line per loaded sandbox backend, shipped or named in `sandbox_plugins`: where it came from, its
 * probe and what it enforces. A backend that cannot start fails only when no other enabled backend of
 * this platform can (then every sandboxed command would fail); otherwise it is a warning.
 */
async function doctorBackendChecks(session: CliSession): Promise<DoctorCheck[]> {
  const { settings } = session;
  const enabled = settings.enabledBackends?.value;
  const rows: Array<DoctorCheck & { usable?: boolean }> = [];
  for (const loaded of session.sandboxPlugins.plugins) {
    const { id } = loaded;
    const name = `sandbox ${id}`;
    const from = `source: ${loaded.source}`;
    if (!loaded.onThisPlatform) {
      rows.push({
        name,
        status: 'skip',
        detail: `not on this platform (runs on ${loaded.plugin.platforms.join(', ')}); ${from}`,
      });
      continue;
    }
    const off =
      enabled && !enabled.includes(id) ? 'not enabled by sandbox_backends in the config' : undefined;
    const barred =
      settings.allowedBackends && !settings.allowedBackends.includes(id)
        ? 'not allowed by the requirements'
        : undefined;
    const backend = pluginBackend(loaded, session.sandboxHost);
    try {
      const probe = await probeSafely(backend);
      if (probe.available) {
        const enforces = probe.enforces?.length
          ? `enforces ${probe.enforces.join(', ')}`
          : 'declares nothing it enforces (no sandboxed policy runs on it)';
        rows.push({
          name,
          status: off || barred ? 'skip' : 'ok',
          detail: [describeProbe(probe), enforces, from, off, barred].filter(Boolean).join('; '),
          usable: !off && !barred,
        });
      } else {
        const landlock = session.sandboxPlugins.plugins.some((p) => p.id === 'landlock');
        rows.push({
          name,
          status: off || barred ? 'skip' : 'fail',
          detail: [probe.reason, from, off, barred].filter(Boolean).join('; '),
          fix: id === 'bwrap' && !landlock ? `${probe.fix}; ${LANDLOCK_SUGGESTION}` : probe.fix,
        });
      }
    } finally {
      await backend.close?.();
    }
  }
  const another = rows.some((row) => row.usable);
  return rows.map(({ usable: _usable, ...row }) =>
    row.status === 'fail' && another ? { ...row, status: 'warn' as const } : row,
  );
}

function describeProbe(probe: SandboxProbe & { available: true }): string {
  const details = Object.entries(probe.details ?? {}).map(
    ([key, value]) => `${key}: ${value === true ? 'yes' : value === false ? 'no' : value}`,
  );
  return [`works${probe.version ? `, version ${probe.version}` : ''}`, ...details].join('; ');
}
