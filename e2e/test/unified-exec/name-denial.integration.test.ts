// nameDenial on what real tools print when a real sandbox (bubblewrap, on an exec-server over stdio)
// blocks them, read from the door's own receipts: the wording is the tools', not a copy in a test.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { effectivePolicyFromSandboxPolicy, type SandboxPolicy } from '@ux/protocol/core';
import { type DenialEvidence, nameDenial } from '@ux/unified-exec';
import { describe, expect, it } from 'vitest';
import { parseReceipt } from '../support/door.js';
import { useThreeEnvironments } from './test-environments.js';

const environments = useThreeEnvironments();

// The servers run with a HOME of their own: version-manager shims (pyenv) would not find their
// installations there, so the interpreters are named by their real paths.
const PYTHON = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], {
  encoding: 'utf8',
}).trim();
const NODE = process.execPath;

function sandboxPolicy(network: boolean) {
  return {
    type: 'workspace-write',
    writable_roots: [],
    network_access: network,
    exclude_tmpdir_env_var: false,
    exclude_slash_tmp: false,
  } as const satisfies SandboxPolicy;
}

/** Runs `cmd` on the exec-server `dev` under workspace-write, and names what its receipt shows. */
async function runAndName(cmd: string, options: { network?: boolean; prepare?: (cwd: string) => void } = {}) {
  const network = options.network ?? false;
  const { door, cwd } = environments.door({
    orchestrator: { policy: { ...sandboxPolicy(network), writable_roots: [] } },
  });
  options.prepare?.(cwd);
  const receipt = parseReceipt(
    (await door.execCommand({ cmd, environment_id: 'dev', yield_time_ms: 10_000 }, { callId: 'c1' })).text,
  );
  const evidence: DenialEvidence = {
    output: receipt.output,
    ...(receipt.exitCode === undefined ? {} : { exitCode: receipt.exitCode }),
    policy: effectivePolicyFromSandboxPolicy({ ...sandboxPolicy(network), writable_roots: [] }),
    cwd,
    remote: true,
    proxyRefusals: [],
    earlyDenied: false,
    canEscalate: false,
  };
  return { named: nameDenial(evidence), receipt, cwd };
}

describe('nameDenial on real sandboxed runs (exec-server, bubblewrap)', () => {
  it('touch outside the workspace', async () => {
    const { named, receipt } = await runAndName('touch /etc/ux-denial-test');
    expect(receipt.exitCode).toBe(1);
    expect(named?.denial).toEqual({
      kind: 'file_write',
      path: '/etc/ux-denial-test',
      message:
        'The sandbox on the exec-server blocked a write to /etc/ux-denial-test: it is outside the places this command may write.',
    });
    expect(named?.nextStep).toMatch(/^Nobody can approve/);
  });

  it('python writing outside the workspace', async () => {
    const { named } = await runAndName(`${PYTHON} -c "open('/usr/ux-denial-test', 'w')"`);
    expect(named?.denial).toMatchObject({ kind: 'file_write', path: '/usr/ux-denial-test' });
  });

  it("a bash redirection into the workspace's git configuration", async () => {
    const { named, cwd } = await runAndName('echo "[alias]" >> .git/config', {
      prepare: (cwd) => {
        mkdirSync(join(cwd, '.git', 'hooks'), { recursive: true });
        writeFileSync(join(cwd, '.git', 'config'), '[core]\n');
        writeFileSync(join(cwd, '.git', 'HEAD'), 'ref: refs/heads/main\n');
      },
    });
    expect(named?.denial).toMatchObject({ kind: 'file_write', path: join(cwd, '.git', 'config') });
    expect(named?.denial.message).toMatch(/protected \(git configuration/);
  });

  it('a server with the network off: node and python', async () => {
    const node = await runAndName(`${NODE} -e "require('net').createServer().listen(0)"`);
    expect(node.named?.denial.kind).toBe('listen');
    expect(node.named?.denial.message).toMatch(
      /^The sandbox on the exec-server blocked a listening socket on 0\.0\.0\.0/,
    );
    const python = await runAndName(`${PYTHON} -m http.server 0`);
    expect(python.named?.denial.kind).toBe('listen');
  });

  it('a connection and a lookup with the network off', async () => {
    const connect = await runAndName(
      `${NODE} -e "require('net').connect(80, '1.1.1.1').on('error', (e) => { console.error(e.message); process.exit(1); })"`,
    );
    expect(connect.named?.denial).toMatchObject({ kind: 'network', host: '1.1.1.1' });
    const lookup = await runAndName(
      `${NODE} -e "require('dns').lookup('example.com', (e) => { console.error(e.message); process.exit(1); })"`,
    );
    expect(lookup.named?.denial).toMatchObject({ kind: 'dns', host: 'example.com' });
  });

  it('is not the sandbox: a file the workspace holds but its mode forbids', async () => {
    const { named, receipt } = await runAndName('echo x > locked', {
      prepare: (cwd) => {
        writeFileSync(join(cwd, 'locked'), '');
        chmodSync(join(cwd, 'locked'), 0o000);
      },
    });
    expect(receipt.output).toMatch(/locked: Permission denied/);
    expect(named).toBeUndefined();
  });

  it('is not the sandbox: a failed lookup with the network on', async () => {
    const { named, receipt } = await runAndName(
      `${NODE} -e "require('dns').lookup('ux-denial-test.invalid', (e) => { console.error(e.message); process.exit(1); })"`,
      { network: true },
    );
    expect(receipt.output).toMatch(/ENOTFOUND|EAI_AGAIN/);
    expect(named).toBeUndefined();
  });
});
