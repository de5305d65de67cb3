import type { AdditionalPermissions, SandboxPermissions } from '@ux/protocol/core';

/** What an `approved_for_session` answer covers: the same command, in the same place, the same way. */
export interface ApprovalKeyFields {
  /** The canonical command (`canonicalCommand`). */
  command: readonly string[];
  cwd: string;
  tty: boolean;
  sandbox_permissions: SandboxPermissions;
  additional_permissions?: AdditionalPermissions;
  /** The remote environment; absent for this machine. */
  environment?: string;
}

/** The cache key: JSON of the fields with sorted object keys, so equal requests give equal keys. */
export function approvalKey(fields: ApprovalKeyFields): string {
  return stableJson({
    command: fields.command,
    cwd: fields.cwd,
    tty: fields.tty,
    sandbox_permissions: fields.sandbox_permissions,
    additional_permissions: fields.additional_permissions ?? null,
    // Absent for this machine, so keys made before environments existed stay the same.
    environment: fields.environment,
  });
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${stableJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The session's `approved_for_session` answers. One store per session: hand the same store to every
 * orchestrator of a session and a fresh one to a new session. Automatic-reviewer decisions are never
 * stored; only the user's are.
 */
export interface ApprovalStore {
  isApprovedForSession(key: string): boolean;
  approveForSession(key: string): void;
  /** Forgets every approval (the user revoked them, or the session was reset). */
  clear(): void;
  readonly size: number;
}

export function createApprovalStore(): ApprovalStore {
  const approved = new Set<string>();
  return {
    isApprovedForSession: (key) => approved.has(key),
    approveForSession: (key) => {
      approved.add(key);
    },
    clear: () => approved.clear(),
    get size() {
      return approved.size;
    },
  };
}
