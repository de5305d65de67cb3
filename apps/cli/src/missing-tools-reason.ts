import { describeAssignment, type FeatureAssignment, type ModeReason } from '@ux/features';
import type { CliSession } from './cli-session.js';

/**
 * Why the session's tool plan leaves out `tools`, naming the feature flag to change and where it was
 * set; undefined when every one is planned. `ux exec` and `ux mcp` serve only what the plan offers.
 * The flag is the one the collapse says settled the mode (`toolPlan.modeReasons`), not worked out again.
 */
export function missingToolsReason(session: CliSession, tools: readonly string[]): string | undefined {
  const { toolPlan, features } = session;
  const missing = tools.filter((tool) => !(toolPlan.tools as readonly string[]).includes(tool));
  if (missing.length === 0) return undefined;
  const names = `${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not offered`;
  const settled = toolPlan.modeReasons.find((reason) => reason.mode !== undefined);
  const source = (reason: ModeReason) =>
    features.features.find((feature) => feature.key === reason.flag)!.source;
  switch (settled?.step) {
    case 'no-shell-tool':
      return `${names}: the shell tool is disabled by ${describeAssignment(source(settled))}; ${fix(source(settled), true)}`;
    case 'unified-exec-off':
      return `${names}: ${missing.length > 1 ? 'they need' : 'it needs'} unified exec, which is disabled by ${describeAssignment(source(settled))}; ${fix(source(settled), true)}`;
    case 'not-composed': {
      const zshFork = features.features.find((feature) => feature.key === 'shell_zsh_fork')!;
      return `${names}: shell_zsh_fork is on (${describeAssignment(zshFork.source)}) and keeps its standalone shell tool; set features.unified_exec_zsh_fork = true to compose them, or features.shell_zsh_fork = false`;
    }
    default:
      return `${names} here: ${[...toolPlan.warnings, ...toolPlan.reasons].join('; ')}`;
  }
}

function fix(source: FeatureAssignment, value: boolean): string {
  switch (source.layer) {
    case 'managed':
      return 'the managed requirements pin it, and only they can change it';
    case 'cli':
      return `drop ${source.flag}`;
    case 'default':
      return `set features.${source.key} = ${value} in the config (or -c features.${source.key}=${value})`;
    case 'profile':
      return `set it to ${value} in profile ${source.profile}, or choose another profile`;
    default:
      return `set it to ${value}`;
  }
}
