import { markError, UxError } from '@ux/protocol/errors';

const MARKER = 'ux.cli.UsageError';

/** A mistake in how `ux` was invoked: exit code 2, with a pointer to the help. */
export class UsageError extends UxError {
  constructor(
    message: string,
    readonly helpCommand = 'ux --help',
  ) {
    super('invalid_arguments', message);
    this.name = 'UsageError';
    markError(this, MARKER);
  }

  /**
   * By marker, like every ux error: `ux.cjs` and each command are separate bundles with their own copy
   * of this class.
   */
  static override isInstance(error: unknown): error is UsageError {
    return UxError.hasMarker(error, MARKER);
  }
}
