import { didYouMean } from '../text/close-matches.js';
import type { RefusalDecider } from '../tools/exec-result-words.js';
import { markError, UxError } from './ux-error.js';

/** One problem in a tool call's arguments, addressed by a dotted path (`additional_permissions.network`). */
export interface ArgumentIssue {
  path: string;
  message: string;
}

const UNKNOWN_PROCESS_ID = 'ux.error.unknown-process-id';
/** A `write_stdin` (or any lookup) named a process id the store does not hold: never existed, exited, pruned. */
export class UnknownProcessIdError extends UxError {
  readonly processId: number | string;
  constructor(processId: number | string, options?: { cause?: unknown }) {
    super('unknown_process_id', `Unknown process id ${processId}`, options);
    this.name = 'UnknownProcessIdError';
    this.processId = processId;
    markError(this, UNKNOWN_PROCESS_ID);
  }
  static override isInstance(error: unknown): error is UnknownProcessIdError {
    return UxError.hasMarker(error, UNKNOWN_PROCESS_ID);
  }
  override toJSON() {
    return { ...super.toJSON(), processId: this.processId };
  }
}

const STDIN_CLOSED = 'ux.error.stdin-closed';
/** Why a write could not reach the process: it was started without stdin, or it has exited. */
export type StdinClosedReason = 'no_stdin' | 'exited';
export class StdinClosedError extends UxError {
  readonly processId: number | string | undefined;
  readonly reason: StdinClosedReason;
  constructor(
    fields: { processId?: number | string; reason: StdinClosedReason },
    options?: { cause?: unknown },
  ) {
    super(
      'stdin_closed',
      fields.reason === 'no_stdin'
        ? 'stdin is closed for this session; rerun exec_command with tty=true to keep stdin open'
        : 'failed to write to stdin: the process has exited',
      options,
    );
    this.name = 'StdinClosedError';
    this.processId = fields.processId;
    this.reason = fields.reason;
    markError(this, STDIN_CLOSED);
  }
  static override isInstance(error: unknown): error is StdinClosedError {
    return UxError.hasMarker(error, STDIN_CLOSED);
  }
  override toJSON() {
    return { ...super.toJSON(), processId: this.processId, reason: this.reason };
  }
}

const SANDBOX_DENIED = 'ux.error.sandbox-denied';
/** A sandboxed command exited early in a way that looks like the sandbox stopped it. */
export class SandboxDeniedError extends UxError {
  readonly sandboxType: string;
  readonly exitCode: number;
  readonly output: string;
  constructor(
    fields: { sandboxType: string; exitCode: number; output: string },
    options?: { cause?: unknown },
  ) {
    super(
      'sandbox_denied',
      fields.output.trim() === '' ? `Process exited with code ${fields.exitCode}` : fields.output,
      options,
    );
    this.name = 'SandboxDeniedError';
    this.sandboxType = fields.sandboxType;
    this.exitCode = fields.exitCode;
    this.output = fields.output;
    markError(this, SANDBOX_DENIED);
  }
  static override isInstance(error: unknown): error is SandboxDeniedError {
    return UxError.hasMarker(error, SANDBOX_DENIED);
  }
  override toJSON() {
    return { ...super.toJSON(), sandboxType: this.sandboxType, exitCode: this.exitCode, output: this.output };
  }
}

const MISSING_COMMAND_LINE = 'ux.error.missing-command-line';
/** A launch was asked for with an empty argv. */
export class MissingCommandLineError extends UxError {
  constructor(options?: { cause?: unknown }) {
    super('missing_command_line', 'missing command line: argv is empty', options);
    this.name = 'MissingCommandLineError';
    markError(this, MISSING_COMMAND_LINE);
  }
  static override isInstance(error: unknown): error is MissingCommandLineError {
    return UxError.hasMarker(error, MISSING_COMMAND_LINE);
  }
}

const SPAWN_FAILED = 'ux.error.spawn-failed';
/** The OS refused to start the process: program or cwd missing, not executable, resource limits. */
export class SpawnFailedError extends UxError {
  readonly command: readonly string[];
  readonly path: string | undefined;
  readonly reason: string;
  constructor(
    fields: { command: readonly string[]; reason: string; path?: string },
    options?: { cause?: unknown },
  ) {
    super(
      'spawn_failed',
      `failed to start ${fields.command[0] ?? fields.path ?? '(empty argv)'}: ${fields.reason}`,
      options,
    );
    this.name = 'SpawnFailedError';
    this.command = fields.command;
    this.path = fields.path;
    this.reason = fields.reason;
    markError(this, SPAWN_FAILED);
  }
  static override isInstance(error: unknown): error is SpawnFailedError {
    return UxError.hasMarker(error, SPAWN_FAILED);
  }
  override toJSON() {
    return { ...super.toJSON(), command: this.command, path: this.path, reason: this.reason };
  }
}

const REJECTED = 'ux.error.rejected';
/** Who turned a command down. */
export type RejectionSource = 'user' | 'policy' | 'hook' | 'reviewer' | 'unattended';
/** The command was not allowed to run: by the user, an exec-policy rule, a hook, or the auto-reviewer. */
export class RejectedError extends UxError {
  readonly reason: string;
  readonly source: RejectionSource;
  /**
   * Who decided, for the model (`refusal.decided_by` of the result), when `source` alone does not
   * tell: `rule` for a prefix rule's `forbidden` (source `policy`).
   */
  readonly decidedBy: RefusalDecider | undefined;
  constructor(
    fields: { reason: string; source: RejectionSource; decidedBy?: RefusalDecider },
    options?: { cause?: unknown },
  ) {
    super('rejected', fields.reason, options);
    this.name = 'RejectedError';
    this.reason = fields.reason;
    this.source = fields.source;
    this.decidedBy = fields.decidedBy;
    markError(this, REJECTED);
  }
  static override isInstance(error: unknown): error is RejectedError {
    return UxError.hasMarker(error, REJECTED);
  }
  override toJSON() {
    return {
      ...super.toJSON(),
      reason: this.reason,
      source: this.source,
      ...(this.decidedBy === undefined ? {} : { decidedBy: this.decidedBy }),
    };
  }
}

const NO_REVIEWER = 'ux.error.no-reviewer';
/**
 * Thrown by a reviewer that could not put the question to anyone (no terminal, an MCP client without
 * elicitation, a closed connection). The command is refused as "no one could be asked for approval",
 * which is not the same as a person saying no.
 */
export class NoReviewerError extends UxError {
  /** Why no one could be asked, e.g. "stdin is not a terminal". */
  readonly reason: string;
  constructor(reason: string, options?: { cause?: unknown }) {
    super('rejected', `no one could be asked for approval (${reason})`, options);
    this.name = 'NoReviewerError';
    this.reason = reason;
    markError(this, NO_REVIEWER);
  }
  static override isInstance(error: unknown): error is NoReviewerError {
    return UxError.hasMarker(error, NO_REVIEWER);
  }
  override toJSON() {
    return { ...super.toJSON(), reason: this.reason };
  }
}

const SANDBOX_UNAVAILABLE = 'ux.error.sandbox-unavailable';
/** The policy needs a sandbox and none can run here. ux fails closed and says how to fix it. */
export class SandboxUnavailableError extends UxError {
  readonly backend: string | undefined;
  readonly reason: string;
  readonly fix: string;
  constructor(fields: { backend?: string; reason: string; fix: string }, options?: { cause?: unknown }) {
    super(
      'sandbox_unavailable',
      `sandbox ${fields.backend ? `"${fields.backend}" ` : ''}unavailable: ${fields.reason}; ${fields.fix}`,
      options,
    );
    this.name = 'SandboxUnavailableError';
    this.backend = fields.backend;
    this.reason = fields.reason;
    this.fix = fields.fix;
    markError(this, SANDBOX_UNAVAILABLE);
  }
  static override isInstance(error: unknown): error is SandboxUnavailableError {
    return UxError.hasMarker(error, SANDBOX_UNAVAILABLE);
  }
  override toJSON() {
    return { ...super.toJSON(), backend: this.backend, reason: this.reason, fix: this.fix };
  }
}

const INVALID_ARGUMENTS = 'ux.error.invalid-arguments';
/** A tool call's arguments do not match its schema; the message lists every problem. */
export class InvalidArgumentsError extends UxError {
  readonly tool: string;
  readonly issues: readonly ArgumentIssue[];
  constructor(fields: { tool: string; issues: readonly ArgumentIssue[] }, options?: { cause?: unknown }) {
    super(
      'invalid_arguments',
      `invalid ${fields.tool} arguments: ${fields.issues
        .map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message))
        .join('; ')}`,
      options,
    );
    this.name = 'InvalidArgumentsError';
    this.tool = fields.tool;
    this.issues = fields.issues;
    markError(this, INVALID_ARGUMENTS);
  }
  static override isInstance(error: unknown): error is InvalidArgumentsError {
    return UxError.hasMarker(error, INVALID_ARGUMENTS);
  }
  override toJSON() {
    return { ...super.toJSON(), tool: this.tool, issues: this.issues };
  }
}

const CONFIG_ERROR = 'ux.error.config';
/** A configuration, requirements or rule file is malformed or holds a value that is not allowed. */
export class ConfigError extends UxError {
  readonly file: string;
  readonly line: number | undefined;
  readonly column: number | undefined;
  readonly reason: string;
  constructor(
    fields: { file: string; reason: string; line?: number; column?: number },
    options?: { cause?: unknown },
  ) {
    super('config_error', `${formatLocation(fields)}: ${fields.reason}`, options);
    this.name = 'ConfigError';
    this.file = fields.file;
    this.line = fields.line;
    this.column = fields.column;
    this.reason = fields.reason;
    markError(this, CONFIG_ERROR);
  }
  static override isInstance(error: unknown): error is ConfigError {
    return UxError.hasMarker(error, CONFIG_ERROR);
  }
  override toJSON() {
    return { ...super.toJSON(), file: this.file, line: this.line, column: this.column, reason: this.reason };
  }
}

/** `file:line:column`, dropping the parts that are unknown. */
export function formatLocation(location: { file: string; line?: number; column?: number }): string {
  if (location.line === undefined) return location.file;
  if (location.column === undefined) return `${location.file}:${location.line}`;
  return `${location.file}:${location.line}:${location.column}`;
}

const UNKNOWN_PLUGIN = 'ux.error.unknown-plugin';
/** A registry was asked for a plugin id it does not hold. */
export class UnknownPluginError extends UxError {
  readonly kind: string;
  readonly id: string;
  readonly available: readonly string[];
  constructor(
    fields: { kind: string; id: string; available: readonly string[] },
    options?: { cause?: unknown },
  ) {
    super(
      'unknown_plugin',
      `unknown ${fields.kind} "${fields.id}"${didYouMean(fields.id, fields.available)}; available: ${
        fields.available.length > 0 ? fields.available.join(', ') : '(none registered)'
      }`,
      options,
    );
    this.name = 'UnknownPluginError';
    this.kind = fields.kind;
    this.id = fields.id;
    this.available = fields.available;
    markError(this, UNKNOWN_PLUGIN);
  }
  static override isInstance(error: unknown): error is UnknownPluginError {
    return UxError.hasMarker(error, UNKNOWN_PLUGIN);
  }
  override toJSON() {
    return { ...super.toJSON(), kind: this.kind, id: this.id, available: this.available };
  }
}
