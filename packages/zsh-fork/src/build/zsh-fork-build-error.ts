import { markError, UxError } from '@ux/protocol/errors';

const MARKER = 'ux.zsh-fork.ZshForkBuildError';

/** Why building or finding the patched zsh failed; a closed set, one fix text each. */
export type ZshForkBuildReason =
  | 'source_not_found'
  | 'source_unsupported'
  | 'source_unavailable'
  | 'source_fetch_failed'
  | 'missing_tool'
  | 'missing_headers'
  | 'patch_failed'
  | 'configure_failed'
  | 'make_failed'
  | 'verify_failed'
  | 'install_failed'
  | 'aborted';

export interface ZshForkBuildErrorFields {
  reason: ZshForkBuildReason;
  /** What is wrong, in one sentence. */
  problem: string;
  /** What to do about it: a command to run or an option to pass. */
  fix: string;
  /** The file or directory concerned, when there is one. */
  path?: string;
  /** The last lines of the failing step's output (download, configure, make, patch). */
  logTail?: string;
  cause?: unknown;
}

/**
 * Building the patched zsh failed. The message is the problem, the fix, then the failing step's last
 * lines of output; each is also a field.
 */
export class ZshForkBuildError extends UxError {
  readonly reason: ZshForkBuildReason;
  readonly problem: string;
  readonly fix: string;
  readonly path: string | undefined;
  readonly logTail: string | undefined;

  constructor(fields: ZshForkBuildErrorFields) {
    super('zsh_fork_build_failed', renderBuildError(fields), { cause: fields.cause });
    this.name = 'ZshForkBuildError';
    this.reason = fields.reason;
    this.problem = fields.problem;
    this.fix = fields.fix;
    this.path = fields.path;
    this.logTail = fields.logTail;
    markError(this, MARKER);
  }

  static override isInstance(error: unknown): error is ZshForkBuildError {
    return UxError.hasMarker(error, MARKER);
  }

  override toJSON(): Record<string, unknown> {
    return {
      ...super.toJSON(),
      reason: this.reason,
      problem: this.problem,
      fix: this.fix,
      ...(this.path === undefined ? {} : { path: this.path }),
      ...(this.logTail === undefined ? {} : { logTail: this.logTail }),
    };
  }
}

function renderBuildError(fields: ZshForkBuildErrorFields): string {
  const tail = fields.logTail?.trimEnd();
  return `${fields.problem}\n${fields.fix}${tail ? `\nlast lines of output:\n${indent(tail)}` : ''}`;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}
