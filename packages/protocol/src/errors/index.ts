// `@ux/protocol/errors`: the error classes alone, for code that must start fast (a CLI's error
// handler) without evaluating every schema of the protocol.
export {
  ConfigError,
  formatLocation,
  InvalidArgumentsError,
  MissingCommandLineError,
  NoReviewerError,
  RejectedError,
  type RejectionSource,
  SandboxDeniedError,
  SandboxUnavailableError,
  SpawnFailedError,
  StdinClosedError,
  UnknownPluginError,
  UnknownProcessIdError,
} from './errors.js';
export { markError, UxError } from './ux-error.js';
