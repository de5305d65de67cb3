// Capabilities fail closed, through the built ux: a backend loaded from config that runs
// here but does not declare a guarantee the session's policy needs is never used for it. With nothing
// else preferred, the command is refused before it runs, with what is missing and how to get it (never
// "run it without a sandbox"); with bubblewrap next in the order of preference, bubblewrap runs it. The
// level a command ran under is in its receipt. The backend is loaded through `sandbox_plugins`
// (wt-plugins' loader): this suite runs once both are merged.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { useLeakCheck } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { makeHome, mcpClient, runUx, type UxHome } from './cli-harness.js';

useLeakCheck();

/**
 * The bubblewrap backend's plugin module (built; resolved by name, the CLI depends on it): the partial
 * backend below plans through it.
 */
const BWRAP_PLUGIN = createRequire(import.meta.url).resolve('@ux/sandbox-bwrap/plugin');

/**
 * A backend that declares less than bubblewrap under it enforces, as a backend without a proxy bridge
 * would (Landlock): everything but `network_by_domain` and `unix_socket_control`. Each command it runs
 * is tagged `PARTIAL=yes`, so a test can tell which backend ran it.
 */
const PARTIAL = `import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
export const sandboxPlugin = {
  specificationVersion: 'ux-sandbox-v1',
  id: 'partial',
  platforms: ['linux'],
  settings: { '~standard': { version: 1, vendor: 'partial', validate: (value) => ({ value }) } },
  async create(settings, host) {
    const inner = await require(settings.delegate).sandboxPlugin.create({}, host);
    return {
      specificationVersion: 'ux-sandbox-v1',
      id: 'partial',
      platforms: ['linux'],
      async probe() {
        const probe = await inner.probe();
        if (!probe.available) return probe;
        return { ...probe, enforces: ['write_limits', 'protected_names', 'read_deny', 'network_off', 'private_tmp'] };
      },
      async plan(request) {
        const plan = await inner.plan(request);
        return { ...plan, env: { ...plan.env, PARTIAL: 'yes' }, sandboxType: 'partial' };
      },
      close: () => inner.close?.(),
    };
  },
};
`;

function homeWith(backends: string): UxHome {
  const home = makeHome({
    config: `sandbox_plugins = ["./plugins/partial.mjs"]
sandbox_backends = ${backends}

[sandbox.partial]
delegate = ${JSON.stringify(BWRAP_PLUGIN)}
`,
  });
  mkdirSync(join(home.home, 'plugins'));
  writeFileSync(join(home.home, 'plugins', 'partial.mjs'), PARTIAL);
  return home;
}

/** Prints `partial=yes` when the partial backend ran the command, `partial=no` otherwise. */
const WHICH = 'echo "partial=$' + '{PARTIAL:-no}"';

describe('a policy the chosen backend cannot enforce', () => {
  it('is refused before anything runs, saying what is missing and how to get it', async () => {
    const home = homeWith('["partial"]');
    const marker = join(home.workspace, 'ran');
    const result = await runUx(
      ['exec', '--allow-domain', 'example.com', '--', '/bin/sh', '-c', `touch ${marker}`],
      home,
    );
    expect(result.status).not.toBe(0);
    expect(existsSync(marker)).toBe(false);
    const said = result.stdout + result.stderr;
    expect(said).toContain(
      'sandbox "partial" unavailable: the policy needs network_by_domain, which no usable sandbox backend enforces: partial does not enforce network_by_domain (the network is allowed by domain, through the proxy)',
    );
    expect(said).toContain('enable a backend that enforces network_by_domain');
    expect(said).toContain('turn the network off (--no-network)');
    expect(said).not.toMatch(/danger-full-access|without (?:a|the) sandbox|unsandboxed/i);
  });

  it('is refused for unix sockets too, naming the sockets', async () => {
    const home = homeWith('["partial"]');
    const result = await runUx(['exec', '--allow-unix-socket', '/run/ux-test.sock', '--', '/bin/true'], home);
    expect(result.status).not.toBe(0);
    expect(result.stdout + result.stderr).toContain(
      'partial does not enforce unix_socket_control (the policy allows some unix sockets (/run/ux-test.sock) and no others)',
    );
  });

  it('runs on the next backend in the order of preference that enforces it, never on the partial one', async () => {
    const home = homeWith('["partial", "bwrap"]');
    const byDomain = await runUx(
      ['exec', '--allow-domain', 'example.com', '--', '/bin/sh', '-c', WHICH],
      home,
    );
    expect(byDomain.stdout).toContain('partial=no\n');
    expect(byDomain.status).toBe(0);
    // What it can enforce, it runs (first in the order).
    const off = await runUx(['exec', '--', '/bin/sh', '-c', WHICH], home);
    expect(off.stdout).toContain('partial=yes\n');
  });
});

describe('ux doctor', () => {
  it("chooses for the session's own policy: a network by domain the only backend cannot enforce fails the check", async () => {
    const home = homeWith('["partial"]');
    writeFileSync(
      home.config,
      `${readFileSync(home.config, 'utf8')}\n[sandbox_workspace_write]\nnetwork = { allow = ["example.com"] }\n`,
    );
    const result = await runUx(['doctor'], home);
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(
      /^fail +sandbox for workspace-write +sandbox "partial" unavailable: the policy needs network_by_domain, which no usable sandbox backend enforces: partial does not enforce network_by_domain/m,
    );
  });
});

describe('the level a command ran under', () => {
  it('is in the MCP structured result and in its text: the backend, what it enforces, how strongly', async () => {
    const home = homeWith('["partial"]');
    const { client, transport } = mcpClient(home);
    await client.connect(transport);
    try {
      const answer = await client.callTool({ name: 'exec_command', arguments: { cmd: 'echo hi' } });
      const result = answer.structuredContent as { sandbox?: unknown; output: string };
      expect(result.output).toBe('hi\n');
      expect(result.sandbox).toEqual({
        backend: 'partial',
        enforces: ['write_limits', 'protected_names', 'read_deny', 'network_off', 'private_tmp'],
        file_system: 'enforced',
        network: 'enforced',
      });
      const text = (answer.content as { text: string }[]).map((part) => part.text).join('');
      expect(text).toContain(
        'Sandbox level: partial (file system enforced, network enforced; enforces write_limits, protected_names, read_deny, network_off, private_tmp)\n',
      );
      // ux doctor names the backend the session's own policy would use.
      const doctor = await runUx(['doctor'], home);
      expect(doctor.stdout).toMatch(/^ok +sandbox for workspace-write +partial will be used$/m);
    } finally {
      await client.close();
    }
  });
});
