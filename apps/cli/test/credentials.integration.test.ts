// ux's credentials never reach a command: the variable an environment's `token_env`
// names (BOX_CRED here, which no default `*TOKEN*` filter matches) is absent from `env` inside every
// command ux starts — `ux exec`, `ux mcp`, a remote stdio environment, a login file's snapshot, `ux
// sandbox` — whatever `[shell_environment_policy]` says. Control: OTHER_CRED, set the same way and
// named nowhere, passes under the same settings, and so does BOX_CRED once no token_env names it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { useLeakCheck } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { BIN, connectMcp, makeHome, runUx, type UxHome } from './cli-harness.js';

useLeakCheck();

const POLICIES: Record<string, string> = {
  'the default policy': '',
  'inherit = "all" with ignore_default_excludes': `[shell_environment_policy]
inherit = "all"
ignore_default_excludes = true
`,
  'include_only naming it': `[shell_environment_policy]
ignore_default_excludes = true
include_only = ["BOX_CRED", "OTHER_CRED", "PATH", "HOME"]
`,
  'set naming it': `[shell_environment_policy]
ignore_default_excludes = true
[shell_environment_policy.set]
BOX_CRED = "from-set"
`,
};

const ENVIRONMENTS = `
[environments.box]
url = "ws://127.0.0.1:9"
token_env = "BOX_CRED"

[environments.dev]
command = [${JSON.stringify(process.execPath)}, ${JSON.stringify(BIN)}, "exec-server", "--listen", "stdio"]
`;

/** A home whose config holds `policy` and, unless `withToken` is false, an environment reading BOX_CRED. */
function home(policy: string, withToken = true): UxHome {
  const made = makeHome({
    config: `${policy}${withToken ? ENVIRONMENTS : ''}`,
  });
  made.env.BOX_CRED = 'the-box-credential';
  made.env.OTHER_CRED = 'another-value';
  return made;
}

/** What `env` printed, as NAME=value lines. */
function variables(output: string): string[] {
  return output.split('\n').filter((line) => /^(BOX|OTHER)_CRED=/.test(line));
}

describe.each(Object.keys(POLICIES))('token_env credentials under %s', (name) => {
  const policy = POLICIES[name]!;

  it('ux exec: env inside has no BOX_CRED, and OTHER_CRED passes', async () => {
    const result = await runUx(['exec', '--', 'env'], home(policy));
    expect(result.status).toBe(0);
    expect(variables(result.stdout)).toEqual(['OTHER_CRED=another-value']);
  });

  it('ux exec in a remote stdio environment: neither ux nor the server hands BOX_CRED on', async () => {
    const result = await runUx(['exec', '--env', 'dev', '--', 'env'], home(policy));
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(variables(result.stdout)).toEqual(['OTHER_CRED=another-value']);
  });

  it('ux mcp: env inside has no BOX_CRED, and OTHER_CRED passes', async () => {
    const client = await connectMcp(home(policy));
    const result = await client.callTool({ name: 'exec_command', arguments: { cmd: 'env' } });
    const output = (result.structuredContent as { output: string }).output;
    expect(variables(output)).toEqual(['OTHER_CRED=another-value']);
  });
});

describe('token_env credentials: controls and other paths', () => {
  it('control: without a token_env naming it, BOX_CRED passes like any variable', async () => {
    const policy = POLICIES['inherit = "all" with ignore_default_excludes']!;
    const result = await runUx(['exec', '--', 'env'], home(policy, false));
    expect(variables(result.stdout).sort()).toEqual([
      'BOX_CRED=the-box-credential',
      'OTHER_CRED=another-value',
    ]);
  });

  it('a login file that exports BOX_CRED does not bring it back through the shell snapshot', async () => {
    const made = home(POLICIES['inherit = "all" with ignore_default_excludes']!);
    writeFileSync(
      join(made.home, '.bash_profile'),
      'export BOX_CRED=from-profile\nexport OTHER_CRED=other-from-profile\n',
    );
    const result = await runUx(['exec', '--', 'env'], made);
    expect(result.status).toBe(0);
    expect(variables(result.stdout)).toEqual(['OTHER_CRED=other-from-profile']);
  });

  it('ux sandbox: the command has no BOX_CRED', async () => {
    const made = home(POLICIES['inherit = "all" with ignore_default_excludes']!);
    const result = await runUx(['sandbox', '--', 'env'], made);
    expect(result.status).toBe(0);
    expect(variables(result.stdout)).toEqual(['OTHER_CRED=another-value']);
  });

  it('ux exec-server: commands it hosts do not get the tokens its own config names', async () => {
    const made = home(POLICIES['inherit = "all" with ignore_default_excludes']!);
    // The client (a ux whose config names no token) asks the server for its variables, unfiltered.
    const client = makeHome({
      config: `[shell_environment_policy]
inherit = "all"
ignore_default_excludes = true

[environments.dev]
command = ["env", "UX_HOME=${made.home}", "BOX_CRED=server-side", "OTHER_CRED=server-other", ${JSON.stringify(process.execPath)}, ${JSON.stringify(BIN)}, "exec-server", "--listen", "stdio"]
`,
    });
    const result = await runUx(['exec', '--env', 'dev', '--', 'env'], client);
    expect(result.status).toBe(0);
    expect(variables(result.stdout)).toEqual(['OTHER_CRED=server-other']);
  });
});
