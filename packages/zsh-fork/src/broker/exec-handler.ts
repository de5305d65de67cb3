// What the broker hands the door for each intercepted exec and the answers it takes: the contract in
// `@ux/protocol` (the door depends on it alone), re-exported here for callers of this package.
export type {
  DenyAction,
  DirectoryIdentity,
  EscalateAction,
  ExecAction,
  ExecContext,
  ExecHandler,
  InterceptedExec,
  RunAction,
} from '@ux/protocol/core';
