export { type CuttableRelay, cuttableRelay } from './cuttable-relay.js';
export { deltaText, ofType, parseReceipt, type Receipt } from './door-receipt.js';
export { eventually, sleep } from './eventually.js';
export { expectNoLeaks, type ProcessSnapshot, snapshotProcess, useLeakCheck } from './leak-check.js';
export {
  type ChatMessage,
  type ChatRequest,
  type ScriptedChatModel,
  startScriptedChatModel,
} from './scripted-chat-model.js';
export { type ScriptedReviewer, scriptedReviewer } from './scripted-reviewer.js';
export { type SeededRandom, seededRandom } from './seeded-random.js';
export { tempDir } from './temp-dir.js';
export { createUnshareTestSandbox } from './unshare-test-sandbox.js';
export { warmUpSpawner } from './warm-up-spawner.js';
export { zshForkPath } from './zsh-fork-path.js';
