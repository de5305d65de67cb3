import { readFileSync } from 'node:fs';
import { ApplyPatchError, applyPatch, formatPatchSummary } from '@ux/apply-patch';
import type { Io } from './io.js';
import { parseOptions } from './parse-options.js';
import { UsageError } from './usage-error.js';

export const APPLY_PATCH_HELP = `Usage: ux apply-patch [PATCH]

Applies a patch in apply_patch's format ("*** Begin Patch" … "*** End Patch") in the current
directory: the patch is the argument, or standard input when there is none. Every file changes, or
none does. Prints "Success. Updated the following files:" with A/M/D per path.

Sandboxed commands find it as \`apply_patch\` (and \`applypatch\`) on their PATH, so a script that calls
apply_patch works; it then runs inside the sandbox, and its writes obey it. A model's own
\`apply_patch <<'EOF' … EOF\` command never gets here: the door applies it after checking every path.

Exit codes: 0 applied, 1 the patch is malformed or does not apply (nothing changed), 2 usage error.
`;

export async function applyPatchCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseOptions(
    args,
    { help: { type: 'boolean', short: 'h' } },
    'ux apply-patch --help',
  );
  if (values.help) {
    io.stdout(APPLY_PATCH_HELP);
    return 0;
  }
  if (positionals.length > 1)
    throw new UsageError(`expected one patch argument, got ${positionals.length}`, 'ux apply-patch --help');
  const patch = positionals[0] ?? readFileSync(0, 'utf8');
  if (patch.trim() === '')
    throw new UsageError('no patch: give it as the argument or on standard input', 'ux apply-patch --help');
  try {
    io.stdout(formatPatchSummary(await applyPatch(patch, { cwd: process.cwd() })));
    return 0;
  } catch (error) {
    if (!ApplyPatchError.isInstance(error)) throw error;
    io.stderr(`${error.message}\n`);
    return 1;
  }
}
