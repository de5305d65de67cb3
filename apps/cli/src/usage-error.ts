const MARKER = Symbol.for('ux.cli.UsageError');

/** A mistake in how `ux` was invoked: exit code 2, with a pointer to the help. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly helpCommand = 'ux --help',
  ) {
    super(message);
    this.name = 'UsageError';
    Object.defineProperty(this, MARKER, { value: true });
  }

  /**
   * By marker, not `instanceof`: `ux.cjs` and each command are separate bundles with their own copy
   * of this class.
   */
  static isInstance(error: unknown): error is UsageError {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[MARKER] === true;
  }
}
