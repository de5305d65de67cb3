import { markError, UxError } from '@ux/protocol/core';

/**
 * Why a patch could not be parsed, planned or applied. A closed set so the door can decide what to do
 * (show the model, ask again, refuse) without reading message text.
 */
export type ApplyPatchErrorReason =
  /** The envelope is wrong: no `*** Begin Patch` first line or no `*** End Patch` last line. */
  | 'invalid_patch'
  /** A line inside the envelope does not fit the grammar. */
  | 'invalid_hunk'
  /** A path is absolute, empty, or contains a NUL byte. */
  | 'invalid_path'
  /** A bare patch was given as a command, without `apply_patch` in front of it. */
  | 'implicit_invocation'
  /** The patch has no file operations. */
  | 'empty_patch'
  /** A `@@` anchor or the hunk's old lines were not found in the file. */
  | 'context_not_found'
  /** Reading, writing or removing a file failed. */
  | 'io';

const MARKER = 'ux.apply-patch.error';

export interface ApplyPatchErrorFields {
  reason: ApplyPatchErrorReason;
  /** The message without the location prefix. */
  detail: string;
  /** 1-based line in the patch text that the error is about. */
  line?: number;
  /** The path as written in the patch. */
  path?: string;
}

/**
 * Every failure of this package, a `UxError` with code `apply_patch_failed` and a `reason`. Checked
 * through a `Symbol.for` marker, so two copies of the package in one process still recognise each
 * other's errors. The message is written for the model: it says where (line or file) and what was
 * expected, so the next patch can be fixed without guessing.
 */
export class ApplyPatchError extends UxError {
  readonly reason: ApplyPatchErrorReason;
  readonly detail: string;
  readonly line: number | undefined;
  readonly path: string | undefined;

  constructor(fields: ApplyPatchErrorFields, options?: { cause?: unknown }) {
    super('apply_patch_failed', renderMessage(fields), options);
    this.name = 'ApplyPatchError';
    this.reason = fields.reason;
    this.detail = fields.detail;
    this.line = fields.line;
    this.path = fields.path;
    markError(this, MARKER);
  }

  static override isInstance(error: unknown): error is ApplyPatchError {
    return UxError.hasMarker(error, MARKER);
  }

  override toJSON(): Record<string, unknown> {
    return {
      ...super.toJSON(),
      reason: this.reason,
      line: this.line,
      path: this.path,
    };
  }
}

function renderMessage({ reason, detail, line }: ApplyPatchErrorFields): string {
  if (reason === 'invalid_hunk' && line !== undefined) return `Invalid hunk at line ${line}: ${detail}`;
  if (reason === 'invalid_path' && line !== undefined) return `Invalid path at line ${line}: ${detail}`;
  return detail;
}
