/**
 * FOR TESTS ONLY. `name=ip[,name=ip…]`: the session's proxy resolves these names to these addresses
 * instead of asking the system resolver (which knows nothing of a test's `allowed.test`). Read only
 * when set, and announced on stderr whenever it is; every other name resolves as usual.
 */
export const TEST_HOSTS_VARIABLE = 'UX_NETWORK_PROXY_HOSTS';

/** The environment commands start from: ux's test switch for the proxy's names is ux's, not theirs. */
export function withoutTestSwitches(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (env[TEST_HOSTS_VARIABLE] === undefined) return env;
  const { [TEST_HOSTS_VARIABLE]: _switch, ...rest } = env;
  return rest;
}
