import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { UxErrorCode } from './ux-error.js';

// Every member of the union, once: adding a code to `UxErrorCode` without adding it here fails the
// typecheck, and the test below then asks for it in docs/errors.md.
const CODES: Record<UxErrorCode, true> = {
  unknown_process_id: true,
  stdin_closed: true,
  sandbox_denied: true,
  missing_command_line: true,
  spawn_failed: true,
  rejected: true,
  sandbox_unavailable: true,
  invalid_arguments: true,
  config_error: true,
  unknown_plugin: true,
  control_error: true,
  zsh_fork_build_failed: true,
  apply_patch_failed: true,
  not_regular_file: true,
  exec_server_request_failed: true,
  exec_server_unreachable: true,
  upstream_connect_failed: true,
  sbpl_syntax_error: true,
  win32_call_failed: true,
  approval_answer_refused: true,
  conformance_failed: true,
  conformance_skipped: true,
};

/** The codes of the table under `## Codes` in docs/errors.md, in order. */
function documentedCodes(markdown: string): string[] {
  const section = markdown.split(/^## /m).find((part) => part.startsWith('Codes\n'));
  if (section === undefined) throw new Error('docs/errors.md has no "## Codes" section');
  return [...section.matchAll(/^\| `([a-z0-9_]+)` +\|/gm)].map((match) => match[1]!);
}

describe('the error codes', () => {
  it('are exactly the ones docs/errors.md lists, each once', () => {
    const doc = readFileSync(new URL('../../../../docs/errors.md', import.meta.url), 'utf8');
    const documented = documentedCodes(doc);
    expect(new Set(documented).size).toBe(documented.length);
    expect([...documented].sort()).toEqual(Object.keys(CODES).sort());
  });
});
