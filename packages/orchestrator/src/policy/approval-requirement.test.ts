import type { ApprovalPolicy, FileSystemPolicy, SandboxPermissions } from '@ux/protocol';
import { beforeAll, describe, expect, it } from 'vitest';
import { type BashParser, loadBashParser } from '../shell/bash-parser.js';
import {
  type ApprovalRequirement,
  approvalRequirement,
  GRANULAR_RULES_REASON,
  GRANULAR_SANDBOX_REASON,
  NEVER_PROMPT_REASON,
} from './approval-requirement.js';
import { createExecPolicy } from './exec-policy.js';
import { parseRulesFile } from './parse-rules-file.js';

let bash: BashParser;
beforeAll(async () => {
  bash = await loadBashParser();
});

const granular = (overrides: { sandbox_approval?: boolean; rules?: boolean } = {}): ApprovalPolicy => ({
  granular: {
    sandbox_approval: true,
    rules: true,
    skill_approval: true,
    request_permissions: true,
    mcp_elicitations: true,
    ...overrides,
  },
});

interface Case {
  script?: string;
  argv?: string[];
  policy?: ApprovalPolicy;
  kind?: FileSystemPolicy['kind'];
  permissions?: SandboxPermissions;
  rules?: string;
  prefixRule?: string[];
}

/** The requirement without `policyReason` (its own tests check it). */
function requirement(c: Case): Omit<ApprovalRequirement, 'policyReason'> {
  const { policyReason: _policyReason, ...rest } = withReason(c) as ApprovalRequirement & {
    policyReason?: string;
  };
  return rest;
}

function withReason(c: Case): ApprovalRequirement {
  return approvalRequirement({
    argv: c.argv ?? ['/bin/bash', '-lc', c.script ?? 'true'],
    approvalPolicy: c.policy ?? 'on-request',
    fileSystemKind: c.kind ?? 'restricted',
    sandboxPermissions: c.permissions ?? 'use_default',
    ...(c.prefixRule ? { prefixRule: c.prefixRule } : {}),
    execPolicy: createExecPolicy(parseRulesFile(c.rules ?? '', 'test.rules')),
    bash,
    platform: 'linux',
  });
}
const type = (c: Case) => requirement(c).type;

describe('fallback for commands no rule matches', () => {
  it.each<[string, Case, ApprovalRequirement['type']]>([
    ['untrusted, known-safe', { policy: 'untrusted', script: 'ls -la && git status' }, 'skip'],
    ['untrusted, not known-safe', { policy: 'untrusted', script: 'cargo test' }, 'needs_approval'],
    [
      'untrusted, known-safe heredoc',
      { policy: 'untrusted', script: "cat <<'EOF'\nhi\nEOF" },
      'needs_approval',
    ],
    ['on-failure', { policy: 'on-failure', script: 'cargo test' }, 'skip'],
    ['never', { policy: 'never', script: 'cargo test' }, 'skip'],
    ['on-request, restricted, default', { script: 'cargo test' }, 'skip'],
    [
      'on-request, restricted, escalated',
      { script: 'cargo test', permissions: 'require_escalated' },
      'needs_approval',
    ],
    [
      'on-request, restricted, more permissions',
      { script: 'cargo test', permissions: 'with_additional_permissions' },
      'needs_approval',
    ],
    [
      'on-request, unrestricted, escalated',
      { script: 'x', kind: 'unrestricted', permissions: 'require_escalated' },
      'skip',
    ],
    [
      'on-request, external sandbox, escalated',
      { script: 'x', kind: 'external-sandbox', permissions: 'require_escalated' },
      'skip',
    ],
    ['granular, restricted, default', { policy: granular(), script: 'cargo test' }, 'skip'],
    [
      'granular, restricted, escalated',
      { policy: granular(), script: 'x', permissions: 'require_escalated' },
      'needs_approval',
    ],
    [
      'granular, unrestricted, escalated',
      { policy: granular(), kind: 'unrestricted', permissions: 'require_escalated' },
      'skip',
    ],
    ['dangerous under on-request', { script: 'rm -rf build' }, 'needs_approval'],
    ['dangerous under on-failure', { policy: 'on-failure', script: 'sudo rm -f x' }, 'needs_approval'],
    ['dangerous under untrusted', { policy: 'untrusted', script: 'rm -rf build' }, 'needs_approval'],
    ['dangerous under never, restricted', { policy: 'never', script: 'rm -rf build' }, 'forbidden'],
    [
      'dangerous under never, sandbox disabled',
      { policy: 'never', kind: 'unrestricted', script: 'rm -rf x' },
      'skip',
    ],
    [
      'dangerous under never, external sandbox',
      { policy: 'never', kind: 'external-sandbox', script: 'rm -rf x' },
      'skip',
    ],
    ['dangerous nested in a script', { script: 'for f in a; do rm -rf "$f"; done' }, 'needs_approval'],
    ['a direct argv', { argv: ['rm', '-rf', 'x'] }, 'needs_approval'],
  ])('%s', (_name, c, expected) => {
    expect(type(c)).toBe(expected);
  });

  it('judges each sub-command and keeps the most restrictive', () => {
    expect(type({ policy: 'untrusted', script: 'ls && cargo test' })).toBe('needs_approval');
    expect(type({ policy: 'never', script: 'ls && rm -rf /' })).toBe('forbidden');
  });

  it('renders a heuristic refusal with the sub-command', () => {
    expect(requirement({ policy: 'never', script: 'ls && rm -rf /' })).toEqual({
      type: 'forbidden',
      reason: '`rm -rf /` rejected: blocked by policy',
    });
  });

  it('does not crash on empty or whitespace-only scripts', () => {
    for (const script of ['', '   ', '\n']) {
      expect(type({ script })).toBe('skip');
      expect(type({ policy: 'untrusted', script })).toBe('needs_approval');
    }
  });
});

describe('prefix rules', () => {
  const rules = `prefix_rule(pattern=["git", "push"], decision="forbidden")
prefix_rule(pattern=["git", "reset"], decision="forbidden", justification="Use git stash instead.")
prefix_rule(pattern=["npm", "publish"], decision="prompt", justification="Publishing is visible to everyone.")
prefix_rule(pattern=["docker"], decision="prompt")
prefix_rule(pattern=["cargo"], decision="allow")
prefix_rule(pattern=["make"], decision="allow")`;

  it('forbid with the exact messages', () => {
    expect(requirement({ rules, script: 'git push origin main' })).toEqual({
      type: 'forbidden',
      reason: '`git push origin main` rejected: policy forbids commands starting with `git push`',
      byRule: true,
    });
    expect(requirement({ rules, script: 'git reset --hard' })).toEqual({
      type: 'forbidden',
      reason: '`git reset --hard` rejected: Use git stash instead.',
      byRule: true,
    });
  });

  it("quotes a forbidden command's control characters as escapes, never raw", () => {
    // The refusal reaches the model and, through `ux exec`, a terminal.
    const refused = requirement({ rules, script: 'git push "\x1b[2J\rok"' });
    expect(refused).toEqual({
      type: 'forbidden',
      reason: "`git push '\\e[2J\\rok'` rejected: policy forbids commands starting with `git push`",
      byRule: true,
    });
  });

  it('forbid even when the command is hidden in a subshell, a substitution or a loop', () => {
    for (const script of [
      '(cd repo && git push)',
      'echo "$(git push)"',
      'for r in a b; do git push "$r"; done',
    ]) {
      expect(type({ rules, script, policy: 'never' }), script).toBe('forbidden');
    }
    // An allow rule never vouches for a script that is not plain.
    expect(requirement({ rules, script: '(cargo build)' })).toMatchObject({
      type: 'skip',
      bypassSandbox: false,
    });
  });

  it('forbid a heredoc-fed command', () => {
    expect(
      type({
        rules: 'prefix_rule(pattern=["python3"], decision="forbidden")',
        script: "python3 <<'EOF'\n1\nEOF",
      }),
    ).toBe('forbidden');
  });

  it('prompt with the rule reason, or refuse when prompts are off', () => {
    expect(requirement({ rules, script: 'npm publish --tag next' })).toEqual({
      type: 'needs_approval',
      reason: '`npm publish --tag next` requires approval: Publishing is visible to everyone.',
    });
    expect(requirement({ rules, script: 'docker run x' })).toEqual({
      type: 'needs_approval',
      reason: '`docker run x` requires approval by policy',
    });
    expect(requirement({ rules, script: 'docker run x', policy: 'never' })).toEqual({
      type: 'forbidden',
      reason: NEVER_PROMPT_REASON,
    });
    expect(requirement({ rules, script: 'docker ps', policy: granular({ rules: false }) })).toEqual({
      type: 'forbidden',
      reason: GRANULAR_RULES_REASON,
    });
    // A heuristic prompt is governed by sandbox_approval, not rules.
    expect(type({ rules, script: 'docker ps', policy: granular({ sandbox_approval: false }) })).toBe(
      'needs_approval',
    );
    expect(
      requirement({
        script: 'x',
        permissions: 'require_escalated',
        policy: granular({ sandbox_approval: false }),
      }),
    ).toEqual({ type: 'forbidden', reason: GRANULAR_SANDBOX_REASON });
    expect(type({ script: 'x', permissions: 'require_escalated', policy: granular({ rules: false }) })).toBe(
      'needs_approval',
    );
  });

  it('bypass the sandbox only when every sub-command matches an allow rule', () => {
    expect(requirement({ rules, script: 'cargo build && make test' })).toEqual({
      type: 'skip',
      bypassSandbox: true,
    });
    expect(requirement({ rules, script: 'cargo build && ls' })).toEqual({
      type: 'skip',
      bypassSandbox: false,
    });
    expect(requirement({ rules, argv: ['cargo', 'build'] })).toEqual({ type: 'skip', bypassSandbox: true });
  });

  it('the strictest decision across sub-commands wins', () => {
    expect(type({ rules, script: 'cargo build && docker ps' })).toBe('needs_approval');
    expect(type({ rules, script: 'cargo build && docker ps && git push' })).toBe('forbidden');
  });

  it('the most specific matching rule gives the message', () => {
    const layered = `prefix_rule(pattern=["git"], decision="forbidden", justification="no git at all")
prefix_rule(pattern=["git", "push", "--force"], decision="forbidden", justification="never force-push")`;
    expect(requirement({ rules: layered, script: 'git push --force' })).toEqual({
      type: 'forbidden',
      reason: '`git push --force` rejected: never force-push',
      byRule: true,
    });
  });
});

describe('the policy reason', () => {
  const reason = (c: Case) => {
    const result = withReason(c);
    return result.type === 'needs_approval' ? result.policyReason : undefined;
  };
  it('names the rule, the dangerous command, the approval policy or the escalation', () => {
    const rules = 'prefix_rule(pattern=["docker"], decision="prompt")';
    expect(reason({ rules, script: 'docker run x' })).toBe('`docker run x` requires approval by policy');
    expect(reason({ script: 'rm -rf build' })).toBe(
      '`rm -rf build` force-deletes files: ux asks even where the sandbox would hold',
    );
    expect(reason({ policy: 'untrusted', script: 'touch /var/tmp/x' })).toBe(
      'approval policy "untrusted": `touch /var/tmp/x` is not a known read-only command',
    );
    expect(reason({ script: 'curl x', permissions: 'require_escalated' })).toBe(
      'the model asked to run it outside the sandbox (sandbox_permissions "require_escalated")',
    );
  });
});

describe('proposed amendments', () => {
  it("offer the model's prefix when it would let every sub-command through", () => {
    expect(
      requirement({
        script: 'cargo test -p x',
        permissions: 'require_escalated',
        prefixRule: ['cargo', 'test'],
      }),
    ).toEqual({ type: 'needs_approval', proposedAmendment: ['cargo', 'test'] });
  });

  it.each([
    ['a bare interpreter', ['python3']],
    ['an interpreter with its inline flag', ['python3', '-c']],
    ['a shell with -lc', ['/bin/bash', '-lc']],
    ['git alone', ['git']],
    ['an empty prefix', []],
    ['an empty word', ['cargo', '']],
    ['a shell with only options', ['sh', '-e', '-u']],
  ])('never offer %s', (_name, prefixRule) => {
    const result = requirement({ script: 'python3 -c 1', permissions: 'require_escalated', prefixRule });
    expect(result).toEqual({ type: 'needs_approval', proposedAmendment: ['python3', '-c', '1'] });
  });

  it("fall back to the prompting command when the model's prefix would not cover the script", () => {
    expect(
      requirement({ policy: 'untrusted', script: 'cargo test && npm test', prefixRule: ['cargo', 'test'] }),
    ).toEqual({ type: 'needs_approval', proposedAmendment: ['cargo', 'test'] });
    expect(requirement({ policy: 'untrusted', script: 'ls && npm test', prefixRule: ['cargo'] })).toEqual({
      type: 'needs_approval',
      proposedAmendment: ['npm', 'test'],
    });
  });

  it('offer nothing when a rule already matched or the script needed the heredoc parser', () => {
    expect(
      requirement({
        rules: 'prefix_rule(pattern=["docker"], decision="prompt")',
        script: 'docker ps',
        prefixRule: ['docker', 'ps'],
      }),
    ).toEqual({ type: 'needs_approval', reason: '`docker ps` requires approval by policy' });
    expect(
      requirement({ policy: 'untrusted', script: "python3 <<'EOF'\n1\nEOF", prefixRule: ['python3'] }),
    ).toEqual({
      type: 'needs_approval',
    });
  });

  it('never derive a rule that would allow anything', () => {
    expect(requirement({ policy: 'untrusted', script: 'sh' })).toEqual({ type: 'needs_approval' });
    expect(requirement({ policy: 'untrusted', script: 'python3 -i' })).toEqual({ type: 'needs_approval' });
    expect(requirement({ script: 'node' })).toEqual({ type: 'skip', bypassSandbox: false });
    expect(requirement({ policy: 'untrusted', script: 'sh build.sh' })).toEqual({
      type: 'needs_approval',
      proposedAmendment: ['sh', 'build.sh'],
    });
  });

  it("offer the model's prefix for a later retry without the sandbox", () => {
    expect(requirement({ script: 'curl -s https://example.com', prefixRule: ['curl'] })).toEqual({
      type: 'skip',
      bypassSandbox: false,
      proposedAmendment: ['curl'],
    });
    expect(requirement({ script: 'curl -s https://example.com', prefixRule: ['bash'] })).toEqual({
      type: 'skip',
      bypassSandbox: false,
      proposedAmendment: ['curl', '-s', 'https://example.com'],
    });
  });

  it('offer the command itself for a later retry without the sandbox', () => {
    expect(requirement({ script: 'cargo build' })).toEqual({
      type: 'skip',
      bypassSandbox: false,
      proposedAmendment: ['cargo', 'build'],
    });
  });
});
