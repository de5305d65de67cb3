import type { ToolPlan } from '@ux/features';
import {
  execCommandToolDefinition,
  shellCommandToolDefinition,
  type ToolDefinition,
  writeStdinToolDefinition,
} from '@ux/protocol/core';

/** The tool definitions to give the model, per the feature plan and the door's environments. */
export function doorToolDefinitions(
  plan: ToolPlan,
  environments: { ids: string[]; default: string | undefined },
): ToolDefinition[] {
  const tools: ToolDefinition[] = [];
  if (plan.tools.includes('exec_command')) {
    tools.push(
      execCommandToolDefinition({
        ...plan.execCommandVariant,
        platform: process.platform,
        environments: { ids: environments.ids, defaultId: environments.default },
      }),
      writeStdinToolDefinition(),
    );
  }
  if (plan.tools.includes('shell_command')) tools.push(shellCommandToolDefinition());
  return tools;
}
