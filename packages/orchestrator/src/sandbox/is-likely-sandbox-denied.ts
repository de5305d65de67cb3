// The denial heuristic lives in @ux/protocol so that every host judges exits alike: the orchestrator
// for local retries, and an exec-server for the `sandboxDenied` flag it sends to its clients.
export { type DenialCheck, isLikelySandboxDenied, isSandboxDenial } from '@ux/protocol/core';
