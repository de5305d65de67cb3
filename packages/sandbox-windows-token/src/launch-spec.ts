import type { WindowsAce, WindowsTokenSpec } from './windows-token-plan.js';

/** What the launcher needs besides argv, cwd and environment (which it takes from its own process). */
export interface WindowsTokenLaunchSpec {
  version: 1;
  sandboxId: string;
  capabilitySid: string;
  token: WindowsTokenSpec;
  aces: WindowsAce[];
  /** The command has a console (ConPTY): it inherits the console instead of the standard handles. */
  tty: boolean;
}

/** base64url of the JSON: one argv element with no quotes or spaces, safe on any command line. */
export function encodeLaunchSpec(spec: WindowsTokenLaunchSpec): string {
  return Buffer.from(JSON.stringify(spec), 'utf8').toString('base64url');
}

/** Decodes and checks a spec; throws an Error saying what is wrong. */
export function decodeLaunchSpec(text: string): WindowsTokenLaunchSpec {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw new Error('the --plan argument is not base64url JSON');
  }
  const spec = value as Partial<WindowsTokenLaunchSpec> | null;
  if (spec?.version !== 1) throw new Error(`unsupported plan version ${JSON.stringify(spec?.version)}`);
  if (typeof spec.capabilitySid !== 'string' || !/^S-1-15-3-1024(-\d+){8}$/.test(spec.capabilitySid)) {
    throw new Error('the plan has no valid capability SID');
  }
  if (!spec.token || !Array.isArray(spec.token.restrictingSids) || typeof spec.token.flags !== 'number') {
    throw new Error('the plan has no token');
  }
  if (!Array.isArray(spec.aces)) throw new Error('the plan has no ACE list');
  for (const ace of spec.aces) {
    const ok =
      typeof ace?.path === 'string' &&
      (ace.trustee === 'capability' || ace.trustee === 'run') &&
      (ace.type === 'allow' || ace.type === 'deny') &&
      Number.isInteger(ace.mask) &&
      Number.isInteger(ace.flags) &&
      (ace.undo === 'after-run' || ace.undo === 'never');
    if (!ok) throw new Error(`the plan has a malformed ACE: ${JSON.stringify(ace)}`);
  }
  return { ...spec, tty: spec.tty === true } as WindowsTokenLaunchSpec;
}

/** Splits the launcher's arguments: `--plan <spec> -- <argv…>`. */
export function parseLauncherArguments(args: readonly string[]): {
  spec: WindowsTokenLaunchSpec;
  argv: string[];
} {
  const separator = args.indexOf('--');
  if (args[0] !== '--plan' || args.length < 2 || separator !== 2) {
    throw new Error('usage: windows-token-launcher --plan <spec> -- <command> [arguments…]');
  }
  const argv = args.slice(separator + 1);
  if (argv.length === 0) throw new Error('no command after --');
  return { spec: decodeLaunchSpec(args[1]!), argv };
}
