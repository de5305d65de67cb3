import { describeAssignment, type ResolvedFeature } from '@ux/features';
import type { CliSession } from './cli-session.js';

/**
 * Why the session's tool plan leaves out `tools`, naming the feature flag to change and where it was
 * set; undefined when every one is planned. `ux exec` and `ux mcp` serve only what the plan offers.
 */
export function missingToolsReason(session: CliSession, tools: readonly string[]): string | undefined {
  const { toolPlan, features } = session;
  const missing = tools.filter((tool) => !(toolPlan.tools as readonly string[]).includes(tool));
  if (missing.length === 0) return undefined;
  const names = `${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not offered`;
  const feature = (key: string) => features.features.find((candidate) => candidate.key === key)!;
  if (!features.flags.shell_tool) {
    const shellTool = feature('shell_tool');
    return `${names}: the shell tool is disabled by ${describeAssignment(shellTool.source)}; ${fix(shellTool, true)}`;
  }
  if (!features.flags.unified_exec) {
    const unifiedExec = feature('unified_exec');
    return `${names}: ${missing.length > 1 ? 'they need' : 'it needs'} unified exec, which is disabled by ${describeAssignment(unifiedExec.source)}; ${fix(unifiedExec, true)}`;
  }
  if (toolPlan.mode === 'disabled') {
    const zshFork = feature('shell_zsh_fork');
    return `${names}: shell_zsh_fork is on (${describeAssignment(zshFork.source)}) and keeps its standalone shell tool; set features.unified_exec_zsh_fork = true to compose them, or features.shell_zsh_fork = false`;
  }
  return `${names} here: ${[...toolPlan.warnings, ...toolPlan.reasons].join('; ')}`;
}

function fix(feature: ResolvedFeature, value: boolean): string {
  const { source } = feature;
  switch (source.layer) {
    case 'managed':
      return 'the managed requirements pin it, and only they can change it';
    case 'cli':
      return `drop ${source.flag}`;
    case 'default':
      return `set features.${feature.key} = ${value} in the config (or -c features.${feature.key}=${value})`;
    case 'profile':
      return `set it to ${value} in profile ${source.profile}, or choose another profile`;
    default:
      return `set it to ${value}`;
  }
}
