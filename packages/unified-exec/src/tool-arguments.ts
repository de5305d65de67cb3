import type {
  ExecCommandArgs,
  ExecCommandVariant,
  ParseResult,
  ShellCommandArgs,
  WriteStdinArgs,
} from '@ux/protocol/core';
import { quickExecCommandArgs, quickShellCommandArgs, quickWriteStdinArgs } from '@ux/protocol/core';

// A well-formed call is accepted by the protocol's quick checks; only a call they cannot accept loads
// the zod schemas, which then decide and say what is wrong. A host that only runs good calls (a CLI's
// one command) never loads a schema library.

export async function execCommandArguments(
  raw: unknown,
  variant: ExecCommandVariant,
): Promise<ParseResult<ExecCommandArgs>> {
  const data = quickExecCommandArgs(raw, variant);
  if (data) return { success: true, data };
  return (await import('@ux/protocol')).parseExecCommandArgs(raw, variant);
}

export async function writeStdinArguments(raw: unknown): Promise<ParseResult<WriteStdinArgs>> {
  const data = quickWriteStdinArgs(raw);
  if (data) return { success: true, data };
  return (await import('@ux/protocol')).parseWriteStdinArgs(raw);
}

export async function shellCommandArguments(raw: unknown): Promise<ParseResult<ShellCommandArgs>> {
  const data = quickShellCommandArgs(raw);
  if (data) return { success: true, data };
  return (await import('@ux/protocol')).parseShellCommandArgs(raw);
}
