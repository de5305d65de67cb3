/**
 * The closed set of reasons a ux operation can fail, each saying what happened. A non-zero exit is a
 * result, never an error. `docs/errors.md` lists the same codes (a test keeps the two equal).
 */
export type UxErrorCode =
  | 'unknown_process_id'
  | 'stdin_closed'
  | 'sandbox_denied'
  | 'missing_command_line'
  | 'spawn_failed'
  | 'rejected'
  | 'sandbox_unavailable'
  | 'invalid_arguments'
  | 'config_error'
  | 'unknown_plugin'
  | 'control_error'
  | 'zsh_fork_build_failed'
  | 'apply_patch_failed'
  | 'not_regular_file'
  | 'exec_server_request_failed'
  | 'exec_server_unreachable'
  | 'upstream_connect_failed'
  | 'sbpl_syntax_error'
  | 'win32_call_failed'
  | 'approval_answer_refused'
  | 'conformance_failed'
  | 'conformance_skipped';

const MARKER = 'ux.error';

/**
 * Base class of every ux error. Identity is checked through a `Symbol.for` marker rather than
 * `instanceof`, so two copies of this package in one process still recognise each other's errors.
 */
export class UxError extends Error {
  readonly code: UxErrorCode;

  constructor(code: UxErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UxError';
    this.code = code;
    markError(this, MARKER);
  }

  static isInstance(error: unknown): error is UxError {
    return UxError.hasMarker(error, MARKER);
  }

  /** Checks for the marker a subclass sets with `markError`. */
  protected static hasMarker(error: unknown, marker: string): boolean {
    return (
      typeof error === 'object' &&
      error !== null &&
      (error as Record<symbol, unknown>)[Symbol.for(marker)] === true
    );
  }

  /** Structured fields for logs and wire messages; subclasses add theirs. */
  toJSON(): Record<string, unknown> {
    return { name: this.name, code: this.code, message: this.message };
  }
}

/** Sets a subclass marker on an instance; subclasses call it from their constructor. */
export function markError(error: UxError, marker: string): void {
  Object.defineProperty(error, Symbol.for(marker), { value: true, enumerable: false });
}
