/**
 * Codex CLI options a person used to `codex exec` types at ux, and what ux calls them. Each entry
 * rewrites the option (and its value, when it takes one) into ux's words, or says plainly that ux has
 * nothing like it.
 */
export interface CodexSpelling {
  /** How Codex writes it, with its value: `-C DIR`. */
  codex: string;
  /** Whether the Codex option takes a value. */
  takesValue: boolean;
  /** ux's words for it, given the value (`VALUE` when there is none). */
  ux?: (value: string) => string[];
  /** The ux options the rewrite needs the command to take. */
  needs?: readonly string[];
  /** Said when ux has no equivalent. */
  none?: string;
}

const SPELLINGS: Record<string, CodexSpelling> = {
  '-p': { codex: '-p PROFILE', takesValue: true, ux: (v) => ['--profile', v], needs: ['profile'] },
  '-C': { codex: '-C DIR', takesValue: true, ux: (v) => ['--cwd', v], needs: ['cwd'] },
  '--cd': { codex: '--cd DIR', takesValue: true, ux: (v) => ['--cwd', v], needs: ['cwd'] },
  '--enable': {
    codex: '--enable FEATURE',
    takesValue: true,
    ux: (v) => ['-c', `features.${v}=true`],
    needs: ['config'],
  },
  '--disable': {
    codex: '--disable FEATURE',
    takesValue: true,
    ux: (v) => ['-c', `features.${v}=false`],
    needs: ['config'],
  },
  '-s': { codex: '-s MODE', takesValue: true, ux: (v) => ['--sandbox', v], needs: ['sandbox'] },
  '-a': { codex: '-a POLICY', takesValue: true, ux: (v) => ['--approval', v], needs: ['approval'] },
  '--ask-for-approval': {
    codex: '--ask-for-approval POLICY',
    takesValue: true,
    ux: (v) => ['--approval', v],
    needs: ['approval'],
  },
  '--add-dir': {
    codex: '--add-dir DIR',
    takesValue: true,
    ux: (v) => ['--writable-root', v],
    needs: ['writable-root'],
  },
  '--full-auto': {
    codex: '--full-auto',
    takesValue: false,
    ux: () => ['--sandbox', 'workspace-write', '--approval', 'on-request'],
    needs: ['sandbox', 'approval'],
  },
  '--dangerously-bypass-approvals-and-sandbox': {
    codex: '--dangerously-bypass-approvals-and-sandbox',
    takesValue: false,
    ux: () => ['--sandbox', 'danger-full-access', '--approval', 'never'],
    needs: ['sandbox', 'approval'],
  },
  '--yolo': {
    codex: '--yolo',
    takesValue: false,
    ux: () => ['--sandbox', 'danger-full-access', '--approval', 'never'],
    needs: ['sandbox', 'approval'],
  },
  '-m': {
    codex: '-m MODEL',
    takesValue: true,
    none: 'ux runs commands, not a model: there is no model to choose',
  },
  '--model': {
    codex: '--model MODEL',
    takesValue: true,
    none: 'ux runs commands, not a model: there is no model to choose',
  },
};

/** The Codex spelling `option` is (`-p`, `--enable`, …), or undefined. */
export function codexSpelling(option: string): CodexSpelling | undefined {
  return Object.hasOwn(SPELLINGS, option) ? SPELLINGS[option] : undefined;
}
