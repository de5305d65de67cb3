import type { ShellEnvironmentPolicy } from '@ux/protocol/core';
import { applyShellEnvironmentPolicy } from '@ux/protocol-utils';

/**
 * Forced on every command (docs/reference/door.md §3; `UX_` where Codex says `CODEX_`): no colours,
 * no pagers, a dumb terminal and UTF-8, so output is plain text a model can read.
 */
export const PINNED_ENVIRONMENT: Readonly<Record<string, string>> = {
  NO_COLOR: '1',
  TERM: 'dumb',
  LANG: 'C.UTF-8',
  LC_CTYPE: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  COLORTERM: '',
  PAGER: 'cat',
  GIT_PAGER: 'cat',
  GH_PAGER: 'cat',
  UX_CI: '1',
};

/**
 * The environment of one command: the shell-environment policy applied to `base`
 * (`applyShellEnvironmentPolicy` of `@ux/protocol`), the thread id, then the pinned keys.
 */
export function buildEnvironment(
  base: Readonly<Record<string, string | undefined>>,
  policy: ShellEnvironmentPolicy = {},
  threadId?: string,
): Record<string, string> {
  const env = applyShellEnvironmentPolicy(base, policy);
  if (threadId !== undefined) env.UX_THREAD_ID = threadId;
  return Object.assign(env, PINNED_ENVIRONMENT);
}
