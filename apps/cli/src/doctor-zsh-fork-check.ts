import { existsSync } from 'node:fs';
import { defaultBrokerPath, locateZshFork, verifyZshFork } from '@ux/zsh-fork';
import { findCachedZshFork } from './cached-zsh-fork.js';
import type { CliSession } from './cli-session.js';
import { configPaths } from './config-files.js';
import type { DoctorCheck } from './doctor-command.js';
import type { Io } from './io.js';

/**
 * Whether the zsh fork is there and works: in use (the flags ask for it), the smoke test of the patched
 * zsh and the native parts; not in use, only whether `ux zsh-fork build` has prepared it.
 */
export async function doctorZshForkCheck(session: CliSession, io: Io): Promise<DoctorCheck> {
  const plan = session.toolPlan;
  const name = 'zsh fork';
  if (plan.zshForkUnavailable !== undefined) {
    const cached = await findCachedZshFork(io.env);
    return {
      name,
      status: 'fail',
      detail: `the flags ask for it, and it cannot start: ${plan.zshForkUnavailable}; every command would be refused${
        cached?.usable ? `; npm test built a usable one at ${cached.path} (zsh ${cached.version})` : ''
      }`,
      fix: cached?.usable
        ? `set zsh_fork.zsh_path = ${JSON.stringify(cached.path)} in config.toml, or run \`ux zsh-fork build\`, or turn shell_zsh_fork off`
        : 'run `ux zsh-fork build` (or set zsh_fork.zsh_path), or turn shell_zsh_fork off',
    };
  }
  if (plan.shell.kind === 'zsh-fork') {
    const verified = await verifyZshFork(plan.shell.zshPath);
    if (!verified.ok)
      return { name, status: 'fail', detail: `${plan.shell.zshPath}: ${verified.reason}`, fix: verified.fix };
    if (!existsSync(defaultBrokerPath()))
      return {
        name,
        status: 'fail',
        detail: `the escalation broker is not built (${defaultBrokerPath()})`,
        fix: 'rebuild ux (`pnpm --filter @ux/zsh-fork build`; needs a C compiler)',
      };
    return {
      name,
      status: 'ok',
      detail: `in use: ${plan.shell.zshPath} (zsh ${verified.version}, intercepts every exec), wrapper ${plan.shell.execveWrapperPath}`,
    };
  }
  const located = locateZshFork({ uxHome: configPaths(io.env).home });
  if (located.exists) return { name, status: 'skip', detail: `not in use; built at ${located.path}` };
  const cached = await findCachedZshFork(io.env);
  return {
    name,
    status: 'skip',
    detail: cached?.usable
      ? `not in use; npm test built a usable one at ${cached.path} (zsh ${cached.version}; the smoke test passed): to use it, set zsh_fork.zsh_path to it and shell_zsh_fork = true (\`ux zsh-fork status\` shows the lines)`
      : 'not in use, not built; `ux zsh-fork build` prepares it for shell_zsh_fork',
  };
}
