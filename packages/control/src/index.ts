export { type ConnectControlOptions, type ControlClient, connectControl } from './connect-control.js';
export { ControlError, type ControlErrorCode } from './control-error.js';
export {
  checkOwnDirectory,
  controlDirectory,
  controlSocketPath,
  controlSocketPid,
  ensureControlDirectory,
} from './control-paths.js';
export {
  CONTROL_MAX_LINE_BYTES,
  CONTROL_PROTOCOL_VERSION,
  type ControlAnswer,
  type ControlEvent,
  type ControlRequest,
  encodeControlMessage,
  parseControlRequest,
  parseControlServerLine,
} from './control-wire.js';
export { listControlProcesses } from './list-control-processes.js';
export {
  type ControlConnection,
  type ControlHandler,
  type ControlHello,
  type ControlProcessKind,
  type ControlServer,
  type ControlServerOptions,
  startControlServer,
} from './start-control-server.js';
export { isAlive, sweepStaleControlSockets } from './sweep-stale-control-sockets.js';
