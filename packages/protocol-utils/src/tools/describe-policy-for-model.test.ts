import type { EffectivePolicy, FileSystemEntry } from '@ux/protocol/core';
import {
  execCommandToolDefinition,
  shellCommandToolDefinition,
  writeStdinToolDefinition,
} from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { describePolicyForModel, type PolicyForModel, withPolicyText } from './describe-policy-for-model.js';

// Goldens: the exact words a model reads for each kind of session. A change here is a change in what
// every model is told; read the new text as a model would before accepting it.

const WORKSPACE = '/home/ada/app';
const READ_ROOT: FileSystemEntry = { path: { type: 'special', value: 'root' }, access: 'read' };

function workspaceWrite(network: EffectivePolicy['network'] = 'restricted', extra: FileSystemEntry[] = []) {
  return {
    fileSystem: {
      kind: 'restricted',
      entries: [
        READ_ROOT,
        { path: { type: 'special', value: 'cwd' }, access: 'write' },
        { path: { type: 'special', value: 'slash_tmp' }, access: 'write' },
        { path: { type: 'special', value: 'tmpdir' }, access: 'write' },
        ...extra,
      ],
    },
    network,
    privateTmp: true,
  } satisfies EffectivePolicy;
}

const READ_ONLY: EffectivePolicy = {
  fileSystem: { kind: 'restricted', entries: [READ_ROOT] },
  network: 'restricted',
};

function session(overrides: Partial<PolicyForModel> = {}): PolicyForModel {
  return {
    policy: workspaceWrite(),
    workspace: WORKSPACE,
    tool: 'exec_command',
    approvalPolicy: 'on-request',
    asker: { kind: 'person' },
    ...overrides,
  };
}

/** What most sessions get: a model reads it on every turn. */
const TYPICAL_BUDGET = 1200;
/** Claude Code cuts a server's instructions at 2,048 characters; nothing may come near. */
const HARD_BUDGET = 2048;

describe('describePolicyForModel', () => {
  it('workspace-write, network off, on-request with a person to ask (the default session)', () => {
    const text = describePolicyForModel(session());
    expect(text).toMatchInlineSnapshot(`
      "Sandbox rules for commands (ux):
      - Writable: the workspace /home/ada/app and /tmp (this session’s own: not the host’s /tmp, removed when the session ends). Everything else is read-only, and so are .git config and hooks, .ux, .codex and .agents in the writable places, and shell start-up files in a writable home.
      - Network: off. Connections and DNS fail, and listening on a port (even 127.0.0.1) is refused (EPERM): a server needs the network.
      - Approvals: force-deleting commands (rm -rf …) are put to the person first. If the sandbox blocks what the task needs, run the command again with sandbox_permissions "require_escalated" and a justification (one sentence for the person): the person may let it run outside the sandbox once, for the session, or, given prefix_rule (e.g. ["npm", "install"]), for all later commands with that prefix."
    `);
    expect(text.length).toBeLessThanOrEqual(TYPICAL_BUDGET);
  });

  it('read-only: nothing writable, not even /tmp', () => {
    const text = describePolicyForModel(session({ policy: READ_ONLY }));
    expect(text).toMatchInlineSnapshot(`
      "Sandbox rules for commands (ux):
      - Writable: nothing (sandbox mode read-only), not even /tmp: any write fails with "Read-only file system". Reading is allowed.
      - Network: off. Connections and DNS fail, and listening on a port (even 127.0.0.1) is refused (EPERM): a server needs the network.
      - Approvals: force-deleting commands (rm -rf …) are put to the person first. If the sandbox blocks what the task needs, run the command again with sandbox_permissions "require_escalated" and a justification (one sentence for the person): the person may let it run outside the sandbox once, for the session, or, given prefix_rule (e.g. ["npm", "install"]), for all later commands with that prefix."
    `);
  });

  it('danger-full-access: no sandbox, so no escalation to ask for', () => {
    const text = describePolicyForModel(
      session({ policy: { fileSystem: { kind: 'unrestricted' }, network: 'enabled' } }),
    );
    expect(text).toMatchInlineSnapshot(`
      "Sandbox rules for commands (ux):
      - No sandbox (sandbox mode danger-full-access): commands run with the user’s own rights, every file and the network included.
      - Approvals: force-deleting commands (rm -rf …) are put to the person first."
    `);
    expect(text).not.toContain('require_escalated');
  });

  it('an external sandbox: ux does not know its limits and says so', () => {
    const text = describePolicyForModel(
      session({ policy: { fileSystem: { kind: 'external-sandbox' }, network: 'restricted' } }),
    );
    expect(text).toMatchInlineSnapshot(`
      "Sandbox rules for commands (ux):
      - Sandbox: enforced outside ux (an external sandbox); ux does not know its limits. Network: assume off.
      - Approvals: force-deleting commands (rm -rf …) are put to the person first."
    `);
  });

  it('network on: listening works', () => {
    const text = describePolicyForModel(session({ policy: workspaceWrite('enabled') }));
    expect(text).toContain('- Network: on (the host’s network); listening on ports works.');
    expect(text).not.toContain('EPERM');
  });

  it('network by domain, others asked; hosts answered for the session are listed', () => {
    const text = describePolicyForModel(
      session({
        policy: workspaceWrite('proxied'),
        domains: {
          allow: ['registry.npmjs.org', '*.github.com'],
          deny: ['evil.example'],
          others: 'ask',
          allowedThisSession: ['pypi.org'],
          refusedThisSession: ['tracker.example'],
        },
      }),
    );
    expect(text).toMatchInlineSnapshot(`
      "Sandbox rules for commands (ux):
      - Writable: the workspace /home/ada/app and /tmp (this session’s own: not the host’s /tmp, removed when the session ends). Everything else is read-only, and so are .git config and hooks, .ux, .codex and .agents in the writable places, and shell start-up files in a writable home.
      - Network: only these hosts, through ux’s proxy (HTTP_PROXY/HTTPS_PROXY/ALL_PROXY are set; no DNS or UDP of your own): registry.npmjs.org, *.github.com. Also allowed for this session: pypi.org. Never: evil.example. Refused for this session: tracker.example. Another host is put to the person when a command connects (once, for the session, or no). A port you listen on is reachable only within the same command.
      - Approvals: force-deleting commands (rm -rf …) are put to the person first. If the sandbox blocks what the task needs, run the command again with sandbox_permissions "require_escalated" and a justification (one sentence for the person): the person may let it run outside the sandbox once, for the session, or, given prefix_rule (e.g. ["npm", "install"]), for all later commands with that prefix."
    `);
    expect(text.length).toBeLessThanOrEqual(TYPICAL_BUDGET);
  });

  it('network by domain with nobody to ask: other hosts are refused, saying why', () => {
    const text = describePolicyForModel(
      session({
        policy: workspaceWrite('proxied'),
        asker: { kind: 'nobody', why: 'this MCP client cannot show approval questions' },
        domains: { allow: ['example.com'], deny: [], others: 'ask' },
      }),
    );
    expect(text).toContain('Other hosts are refused (this MCP client cannot show approval questions).');
  });

  it('network by domain within an administrator’s cap, and lists that refuse outright', () => {
    const capped = describePolicyForModel(
      session({
        policy: workspaceWrite('proxied'),
        domains: { allow: [], deny: [], others: { ask: 'within', within: ['*.corp.example'] } },
      }),
    );
    expect(capped).toContain('only these hosts, through ux’s proxy');
    expect(capped).toContain('none listed');
    expect(capped).toContain(
      'Another host within *.corp.example is put to the person when a command connects (once, for the session, or no); others are refused.',
    );
    const closed = describePolicyForModel(
      session({
        policy: workspaceWrite('proxied'),
        domains: { allow: ['a.example'], deny: [], others: { refused: 'network.ask_unknown = false' } },
      }),
    );
    expect(closed).toContain('Other hosts are refused (network.ask_unknown = false).');
  });

  it('deny-read: the paths are named and nothing runs outside the sandbox', () => {
    const text = describePolicyForModel(
      session({
        policy: workspaceWrite('restricted', [
          { path: { type: 'path', path: '/home/ada/.ssh' }, access: 'none' },
          { path: { type: 'glob', pattern: '/home/ada/app/**/*.env' }, access: 'none' },
        ]),
      }),
    );
    expect(text).toMatchInlineSnapshot(`
      "Sandbox rules for commands (ux):
      - Writable: the workspace /home/ada/app and /tmp (this session’s own: not the host’s /tmp, removed when the session ends). Everything else is read-only, and so are .git config and hooks, .ux, .codex and .agents in the writable places, and shell start-up files in a writable home.
      - Unreadable: /home/ada/.ssh, /home/ada/app/**/*.env (reads fail, also for approved commands).
      - Network: off. Connections and DNS fail, and listening on a port (even 127.0.0.1) is refused (EPERM): a server needs the network.
      - Approvals: force-deleting commands (rm -rf …) are put to the person first. Nothing runs outside the sandbox in this session, even when approved: unreadable paths are set."
    `);
    expect(text).not.toContain('require_escalated" and');
  });

  it('approval policy never: nothing is asked, so escalation is refused', () => {
    const text = describePolicyForModel(
      session({ approvalPolicy: 'never', asker: { kind: 'nobody', why: 'approval policy never' } }),
    );
    expect(text).toMatchInlineSnapshot(`
      "Sandbox rules for commands (ux):
      - Writable: the workspace /home/ada/app and /tmp (this session’s own: not the host’s /tmp, removed when the session ends). Everything else is read-only, and so are .git config and hooks, .ux, .codex and .agents in the writable places, and shell start-up files in a writable home.
      - Network: off. Connections and DNS fail, and listening on a port (even 127.0.0.1) is refused (EPERM): a server needs the network.
      - Approvals: nobody is asked (approval policy never): whatever needs approval is refused, require_escalated and force-deleting commands (rm -rf …) included. Work within these limits."
    `);
  });

  it('approval policy untrusted: every command but known read-only ones is asked about', () => {
    const text = describePolicyForModel(session({ approvalPolicy: 'untrusted' }));
    expect(text).toMatchInlineSnapshot(`
      "Sandbox rules for commands (ux):
      - Writable: the workspace /home/ada/app and /tmp (this session’s own: not the host’s /tmp, removed when the session ends). Everything else is read-only, and so are .git config and hooks, .ux, .codex and .agents in the writable places, and shell start-up files in a writable home.
      - Network: off. Connections and DNS fail, and listening on a port (even 127.0.0.1) is refused (EPERM): a server needs the network.
      - Approvals: every command but known read-only ones (ls, cat, git status, …) is put to the person first. A command the sandbox blocks as it starts is offered to the person to run again outside it. require_escalated is refused under approval policy untrusted."
    `);
  });

  it('approval policy on-failure and a granular policy without sandbox approvals', () => {
    expect(describePolicyForModel(session({ approvalPolicy: 'on-failure' }))).toContain(
      'A command the sandbox blocks as it starts is offered to the person to run again outside it. require_escalated is refused under approval policy on-failure.',
    );
    const granular = describePolicyForModel(
      session({
        approvalPolicy: {
          granular: {
            sandbox_approval: false,
            rules: true,
            skill_approval: true,
            request_permissions: true,
            mcp_elicitations: true,
          },
        },
      }),
    );
    expect(granular).not.toContain('offered to the person');
    expect(granular).toContain('require_escalated is refused under approval policy granular.');
  });

  it('a client that cannot elicit: requests needing approval are refused, and the model is told', () => {
    const text = describePolicyForModel(
      session({ asker: { kind: 'nobody', why: 'this MCP client cannot show approval questions' } }),
    );
    expect(text).toMatchInlineSnapshot(`
      "Sandbox rules for commands (ux):
      - Writable: the workspace /home/ada/app and /tmp (this session’s own: not the host’s /tmp, removed when the session ends). Everything else is read-only, and so are .git config and hooks, .ux, .codex and .agents in the writable places, and shell start-up files in a writable home.
      - Network: off. Connections and DNS fail, and listening on a port (even 127.0.0.1) is refused (EPERM): a server needs the network.
      - Approvals: nobody can be asked (this MCP client cannot show approval questions): whatever needs approval is refused, require_escalated included, and so are force-deleting commands (rm -rf …). Work within these limits."
    `);
  });

  it('an automatic reviewer answers instead of the person', () => {
    const text = describePolicyForModel(session({ asker: { kind: 'automatic_reviewer' } }));
    expect(text).toContain('an automatic reviewer may let it run outside the sandbox');
    expect(text).not.toContain('the person');
  });

  it('several environments, one remote', () => {
    const text = describePolicyForModel(
      session({
        environments: {
          defaultId: 'local',
          list: [{ id: 'local' }, { id: 'box', remote: 'a ux exec-server', cwd: '/srv/app' }],
        },
      }),
    );
    expect(text).toMatchInlineSnapshot(`
      "Sandbox rules for commands (ux):
      - Writable: the workspace /home/ada/app and /tmp (this session’s own: not the host’s /tmp, removed when the session ends). Everything else is read-only, and so are .git config and hooks, .ux, .codex and .agents in the writable places, and shell start-up files in a writable home.
      - Network: off. Connections and DNS fail, and listening on a port (even 127.0.0.1) is refused (EPERM): a server needs the network.
      - Environments (environment_id): local (this machine, the default), box (remote: a ux exec-server, starts in /srv/app). A remote one applies the same rules to its own files, its own /tmp and its own network.
      - Approvals: force-deleting commands (rm -rf …) are put to the person first. If the sandbox blocks what the task needs, run the command again with sandbox_permissions "require_escalated" and a justification (one sentence for the person): the person may let it run outside the sandbox once, for the session, or, given prefix_rule (e.g. ["npm", "install"]), for all later commands with that prefix."
    `);
    expect(text.length).toBeLessThanOrEqual(TYPICAL_BUDGET);
  });

  it('one local environment is not mentioned', () => {
    const text = describePolicyForModel(
      session({ environments: { defaultId: 'local', list: [{ id: 'local' }] } }),
    );
    expect(text).not.toContain('Environment');
  });

  it('shell_command cannot ask to leave the sandbox', () => {
    const text = describePolicyForModel(session({ tool: 'shell_command' }));
    expect(text).toContain('shell_command cannot ask to run outside the sandbox.');
    expect(text).not.toContain('require_escalated');
  });

  it('prefixes approved during the session are listed', () => {
    const text = describePolicyForModel(
      session({
        approvedPrefixes: [
          ['npm', 'install'],
          ['git', 'pull'],
        ],
      }),
    );
    expect(text).toContain(
      '- Approved in this session, so run without a question: commands starting with `npm install`, `git pull`.',
    );
  });

  it('the host’s shared /tmp when private_tmp is off, $TMPDIR on macOS', () => {
    const shared = describePolicyForModel(session({ policy: { ...workspaceWrite(), privateTmp: false } }));
    expect(shared).toContain('/tmp and $TMPDIR (the host’s, shared)');
    const mac = describePolicyForModel(session({ platform: 'darwin' }));
    expect(mac).toContain('$TMPDIR (this session’s own');
  });

  it('names chosen by others are shown with escapes, never as control characters', () => {
    const text = describePolicyForModel(
      session({
        workspace: '/home/ada/\u001b[2Kapp',
        policy: workspaceWrite('proxied'),
        domains: { allow: ['a\u202eb.example'], deny: [], others: 'ask' },
      }),
    );
    expect(text).not.toMatch(/[\u001b\u202e]/);
    expect(text).toContain('the workspace /home/ada/\\e[2Kapp');
    expect(text).toContain('a\\u202eb.example');
  });

  it('a list longer than six names is cut', () => {
    const hosts = Array.from({ length: 10 }, (_, index) => `h${index}.example`);
    const text = describePolicyForModel(
      session({ policy: workspaceWrite('proxied'), domains: { allow: hosts, deny: [], others: 'ask' } }),
    );
    expect(text).toContain(
      ': h0.example, h1.example, h2.example, h3.example, h4.example, h5.example and 4 more.',
    );
  });

  it('long lists are cut, and the worst realistic session stays under the hard budget', () => {
    const many = Array.from({ length: 30 }, (_, index) => `host${index}.example`);
    const text = describePolicyForModel(
      session({
        policy: workspaceWrite('proxied', [
          ...many.map(
            (name): FileSystemEntry => ({ path: { type: 'path', path: `/data/${name}` }, access: 'write' }),
          ),
          ...many.map(
            (name): FileSystemEntry => ({ path: { type: 'path', path: `/secret/${name}` }, access: 'none' }),
          ),
        ]),
        domains: {
          allow: many,
          deny: many,
          others: 'ask',
          allowedThisSession: many,
          refusedThisSession: many,
        },
        approvedPrefixes: many.map((name) => ['curl', name]),
        environments: {
          defaultId: 'local',
          list: [{ id: 'local' }, ...many.map((name) => ({ id: name, remote: 'a ux exec-server' }))],
        },
      }),
    );
    expect(text).toContain('and 28 more');
    expect(text.length).toBeLessThanOrEqual(HARD_BUDGET);
  });
});

describe('withPolicyText', () => {
  it('ends the description of the tools that run commands with the policy, and leaves write_stdin alone', () => {
    const policy = describePolicyForModel(session());
    const exec = execCommandToolDefinition();
    expect(withPolicyText(exec, policy)).toEqual({
      ...exec,
      description: `${exec.description}\n\n${policy}`,
    });
    const shell = shellCommandToolDefinition();
    expect(withPolicyText(shell, policy).description).toBe(`${shell.description}\n\n${policy}`);
    const stdin = writeStdinToolDefinition();
    expect(withPolicyText(stdin, policy)).toBe(stdin);
  });
});
