import { isValidTerminalSize, TERMINAL_SIZE_RULE, type TerminalSize } from '@ux/protocol/core';

export interface SpawnIssue {
  path: string;
  message: string;
}

/**
 * What every operating system rejects or mangles in a spawn request: argv entries that are not strings
 * or hold a NUL byte, variable names that are empty or hold `=` or NUL, values that are not strings or
 * hold NUL, and nonsense terminal sizes. Each platform's spawner adds its own rules.
 */
export function spawnRequestIssues(request: {
  argv: readonly unknown[];
  env: Readonly<Record<string, unknown>>;
  size?: TerminalSize;
}): SpawnIssue[] {
  const issues: SpawnIssue[] = [];
  request.argv.forEach((arg, index) => {
    if (typeof arg !== 'string') issues.push({ path: `argv[${index}]`, message: 'must be a string' });
    else if (arg.includes('\0'))
      issues.push({ path: `argv[${index}]`, message: 'must not contain a NUL byte' });
  });
  for (const [name, value] of Object.entries(request.env)) {
    if (name === '' || name.includes('=') || name.includes('\0')) {
      issues.push({ path: `env.${name}`, message: 'is not a valid variable name' });
    } else if (typeof value !== 'string') {
      issues.push({ path: `env.${name}`, message: 'must be a string' });
    } else if (value.includes('\0')) {
      issues.push({ path: `env.${name}`, message: 'must not contain a NUL byte' });
    }
  }
  if (request.size && !isValidTerminalSize(request.size))
    issues.push({ path: 'size', message: TERMINAL_SIZE_RULE });
  return issues;
}
