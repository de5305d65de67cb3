/** A mistake in how `ux` was invoked: exit code 2, with a pointer to the help. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly helpCommand = 'ux --help',
  ) {
    super(message);
    this.name = 'UsageError';
  }
}
