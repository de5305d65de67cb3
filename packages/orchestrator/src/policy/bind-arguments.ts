import { didYouMean } from '@ux/protocol/core';
import { configError } from './build-prefix-rule.js';
import type { StarlarkArgument, StarlarkCall } from './parse-starlark-calls.js';

/**
 * Binds a call's arguments to parameter names, by position then by keyword, as Starlark does:
 * unknown keywords (with close matches), repeated parameters, positional arguments after keyword ones
 * and too many positional arguments are errors at their position.
 */
export function bindArguments(
  call: StarlarkCall,
  parameters: readonly string[],
  file: string,
): Map<string, StarlarkArgument> {
  const bound = new Map<string, StarlarkArgument>();
  let positional = 0;
  let sawKeyword = false;
  for (const argument of call.arguments) {
    let name: string;
    if (argument.name === undefined) {
      if (sawKeyword)
        throw configError(file, argument.at, 'a positional argument cannot follow a keyword argument');
      if (positional >= parameters.length) {
        throw configError(
          file,
          argument.at,
          `${call.name} takes at most ${parameters.length} arguments (${parameters.join(', ')})`,
        );
      }
      name = parameters[positional++]!;
    } else {
      sawKeyword = true;
      name = argument.name;
      if (!parameters.includes(name)) {
        throw configError(
          file,
          argument.at,
          `${call.name} has no argument "${name}"${didYouMean(name, parameters)}; it takes ${parameters.join(', ')}`,
        );
      }
    }
    if (bound.has(name)) throw configError(file, argument.at, `${call.name} got "${name}" twice`);
    bound.set(name, argument);
  }
  return bound;
}
