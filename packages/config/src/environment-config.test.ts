import { planTools } from '@ux/features';
import { ConfigError, type ExecCommandVariant, UxError } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { applyConfigOverrides } from './apply-config-overrides.js';
import { chooseEnvironment } from './choose-environment.js';
import { toolPlanEnvironments } from './environment-config.js';
import { parseConfigOverride } from './parse-config-override.js';
import { parseRequirements } from './requirements.js';
import { resolveSessionSettings } from './resolve-session-settings.js';
import { parseTomlDocument } from './toml-document.js';
import { parseUserConfig } from './user-config.js';

const FILE = '/home/dev/.ux/config.toml';
const REQ = '/etc/ux/requirements.toml';

const userConfig = (text: string) => parseUserConfig(parseTomlDocument(text, FILE));
const requirements = (text: string) => parseRequirements(parseTomlDocument(text, REQ));

function errorOf(run: () => unknown): UxError {
  try {
    run();
  } catch (error) {
    if (UxError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a UxError');
}
const messageOf = (run: () => unknown) => errorOf(run).message;

const TWO = `[environments.dev]
command = ["ssh", "dev", "ux", "exec-server", "--listen", "stdio"]
cwd = "/home/me/project"

[environments.box]
url = "wss://box.example:8765"
token_env = "BOX_TOKEN"
cwd = "/srv/work"
`;

describe('[environments.<name>] in config.toml', () => {
  it('reads url and command environments, sorted by name, with where each was defined', () => {
    expect(userConfig(TWO).environments).toEqual([
      {
        id: 'box',
        kind: 'websocket',
        url: 'wss://box.example:8765',
        tokenEnv: 'BOX_TOKEN',
        cwd: '/srv/work',
        definedAt: { file: FILE, line: 5, column: 2 },
      },
      {
        id: 'dev',
        kind: 'command',
        command: ['ssh', 'dev', 'ux', 'exec-server', '--listen', 'stdio'],
        cwd: '/home/me/project',
        definedAt: { file: FILE, line: 1, column: 2 },
      },
    ]);
    expect(userConfig('[environments.b-1_x]\nurl = "ws://10.0.0.2:9000"\n').environments).toEqual([
      {
        id: 'b-1_x',
        kind: 'websocket',
        url: 'ws://10.0.0.2:9000',
        definedAt: { file: FILE, line: 1, column: 2 },
      },
    ]);
    expect(userConfig('').environments).toEqual([]);
  });

  it('reads default_environment at the top level and in profiles', () => {
    const config = userConfig(
      `default_environment = "box"\n${TWO}[profiles.remote]\ndefault_environment = "dev"\n`,
    );
    expect(config.session.defaultEnvironment).toEqual({
      value: 'box',
      location: { file: FILE, line: 1, column: 1 },
    });
    expect(config.profiles.remote?.session.defaultEnvironment).toEqual({
      value: 'dev',
      location: { file: FILE, line: 11, column: 1 },
    });
  });

  it.each([
    [
      '[environments.box]\nurl = "wss://a:1"\ncommand = ["ssh", "a"]\n',
      `${FILE}:3:1: environments.box sets both url and command: an environment is reached either over WebSocket (url) or through a command speaking the exec-server protocol on stdio (command), not both`,
    ],
    [
      '\n[environments.box]\ncwd = "/srv"\n',
      `${FILE}:2:2: environments.box needs url (a ws:// or wss:// address of a ux exec-server) or command (a program speaking the exec-server protocol on stdio, e.g. ["ssh", "host", "ux", "exec-server", "--listen", "stdio"])`,
    ],
    [
      '[environments.box]\nurl = "https://box.example"\n',
      `${FILE}:2:1: environments.box.url must be a ws:// or wss:// URL, got https:// (a ux exec-server listens on WebSocket)`,
    ],
    [
      '[environments.box]\nurl = "box.example:8765"\n',
      `${FILE}:2:1: environments.box.url must be a ws:// or wss:// URL, got box.example:// (a ux exec-server listens on WebSocket)`,
    ],
    [
      '[environments.box]\nurl = "wss://"\n',
      `${FILE}:2:1: environments.box.url is not a valid URL (expected ws://HOST:PORT or wss://HOST:PORT)`,
    ],
    [
      '[environments.box]\nurl = 8765\n',
      `${FILE}:2:1: environments.box.url must be a ws:// or wss:// URL, got 8765`,
    ],
    [
      '[environments.box]\nurl = "wss://me:hunter2@box.example"\n',
      `${FILE}:2:1: environments.box.url must not carry credentials (user:password@): a token is never stored in a config file: put it in an environment variable and name that variable with token_env (token_env = "BOX_TOKEN")`,
    ],
    [
      '[environments.box]\nurl = "wss://box.example/?access_token=abc123"\n',
      `${FILE}:2:1: environments.box.url must not carry a token (query parameter "access_token"): a token is never stored in a config file`,
    ],
    [
      '[environments.box]\nurl = "wss://box.example"\ntoken = "abc123"\n',
      `${FILE}:3:1: environments.box.token: a token is never stored in a config file: put it in an environment variable and name that variable with token_env (token_env = "BOX_TOKEN")`,
    ],
    [
      '[environments.box]\nurl = "wss://box.example"\napi_key = "abc123"\n',
      `${FILE}:3:1: environments.box.api_key: a token is never stored in a config file`,
    ],
    [
      '[environments.box]\nurl = "wss://box.example"\ntoken_env = "eyJhbGciOi.JIUzI1NiJ9"\n',
      `${FILE}:3:1: environments.box.token_env must be the name of an environment variable ([A-Za-z_][A-Za-z0-9_]*), not the token itself: the token is read from that variable`,
    ],
    [
      '[environments.box]\nurl = "wss://box.example"\ntoken_env = "1TOKEN"\n',
      'environments.box.token_env must be the name of an environment variable',
    ],
    [
      '[environments.dev]\ncommand = ["ssh", "dev"]\ntoken_env = "DEV_TOKEN"\n',
      `${FILE}:3:1: environments.dev.token_env applies to url environments only: a command environment authenticates through its command (ssh, docker exec, kubectl exec)`,
    ],
    [
      '[environments.dev]\ncommand = []\n',
      `${FILE}:2:1: environments.dev.command must be a non-empty array of strings (the program and its arguments), got an array`,
    ],
    [
      '[environments.dev]\ncommand = "ssh dev"\n',
      `${FILE}:2:1: environments.dev.command must be a non-empty array of strings (the program and its arguments), got "ssh dev"`,
    ],
    [
      '[environments.dev]\ncommand = ["ssh", ""]\n',
      `${FILE}:2:19: environments.dev.command[1] must be a non-empty string, got ""`,
    ],
    [
      '[environments.dev]\ncommand = ["ssh"]\ncwd = "project"\n',
      `${FILE}:3:1: environments.dev.cwd must be an absolute path (the working directory there), got "project"`,
    ],
    [
      '[environments.dev]\ncommand = ["ssh"]\ncdw = "/srv"\n',
      `${FILE}:3:1: unknown key environments.dev.cdw (did you mean "cwd"?)`,
    ],
    [
      '[environments.Box]\nurl = "wss://a"\n',
      `${FILE}:1:2: environment name "Box" is not usable as --env NAME: use lowercase letters, digits, "_" and "-", starting with a letter or digit`,
    ],
    [
      '[environments._x]\nurl = "wss://a"\n',
      `${FILE}:1:2: environment name "_x" is not usable as --env NAME`,
    ],
    [
      '[environments.local]\nurl = "wss://a"\n',
      `${FILE}:1:2: environments.local: "local" is this machine's environment; it always exists and cannot be defined (choose another name)`,
    ],
    ['environments = ["box"]\n', `${FILE}:1:1: environments must be a table of [environments.<name>] tables`],
    ['environments = { box = "wss://a" }\n', `${FILE}:1:18: environments.box must be a table`],
    [
      'default_environment = "Box"\n',
      `${FILE}:1:1: default_environment must be an environment name (lowercase letters, digits, "_" and "-", starting with a letter or digit), got "Box"`,
    ],
    ['default_environment = 1\n', `${FILE}:1:1: default_environment must be an environment name`],
    [
      '[profiles.p]\ndefault_environment = ["box"]\n',
      `${FILE}:2:1: profiles.p.default_environment must be an environment name (lowercase letters, digits, "_" and "-", starting with a letter or digit), got an array`,
    ],
    [
      'default_enviroment = "box"\n',
      `${FILE}:1:1: unknown key default_enviroment (did you mean "default_environment"?)`,
    ],
    [
      'profile = "p"\n[profiles.p]\n[environment.box]\nurl = "wss://a"\n',
      `${FILE}:3:2: unknown key environment (did you mean "default_environment" or "environments" or "shell_environment_policy"?)`,
    ],
  ])('refuses %j', (text, message) => {
    const error = errorOf(() => userConfig(text));
    expect(ConfigError.isInstance(error)).toBe(true);
    expect(error.message).toContain(message);
  });

  it('never repeats a secret in a message', () => {
    for (const text of [
      '[environments.box]\nurl = "wss://me:s3cr3t-value@box.example"\n',
      '[environments.box]\nurl = "wss://box.example/?token=s3cr3t-value"\n',
      '[environments.box]\nurl = "wss://box.example"\ntoken = "s3cr3t-value"\n',
      '[environments.box]\nurl = "wss://box.example"\ntoken_env = "s3cr3t-value"\n',
    ]) {
      expect(messageOf(() => userConfig(text))).not.toContain('s3cr3t');
    }
  });
});

describe('environments in requirements', () => {
  it('reads allowed_environments and the environments the administrator defines', () => {
    const parsed = requirements(
      'allowed_environments = ["local", "gpu"]\n[environments.gpu]\nurl = "wss://gpu.corp:8765"\ntoken_env = "GPU_TOKEN"\n',
    );
    expect(parsed.allowedEnvironments).toEqual({
      values: ['local', 'gpu'],
      location: { file: REQ, line: 1, column: 1 },
    });
    expect(parsed.environments).toEqual([
      {
        id: 'gpu',
        kind: 'websocket',
        url: 'wss://gpu.corp:8765',
        tokenEnv: 'GPU_TOKEN',
        definedAt: { file: REQ, line: 2, column: 2 },
      },
    ]);
  });

  it.each([
    ['allowed_environments = []\n', `${REQ}:1:1: allowed_environments must allow at least one value`],
    [
      'allowed_environments = ["local", "Box"]\n',
      `${REQ}:1:34: allowed_environments[1]: "Box" is not an environment name (lowercase letters, digits, "_" and "-", starting with a letter or digit)`,
    ],
    [
      'allowed_environments = ["local"]\n[environments.gpu]\nurl = "wss://gpu.corp"\n',
      `${REQ}:2:2: environments.gpu is defined here but not listed in allowed_environments (${REQ}:1:1); add "gpu" there or remove the definition`,
    ],
    [
      '[environments.gpu]\nurl = "wss://gpu.corp"\ntoken = "x"\n',
      `${REQ}:3:1: environments.gpu.token: a token is never stored in a config file`,
    ],
    [
      '[environments.local]\ncommand = ["x"]\n',
      `${REQ}:1:2: environments.local: "local" is this machine's environment`,
    ],
  ])('refuses %j', (text, message) => {
    expect(messageOf(() => requirements(text))).toContain(message);
  });
});

describe('resolving environments', () => {
  it('lists local, then the requirements, then the user, each by name; the default is local', () => {
    const resolved = resolveSessionSettings({
      user: userConfig(
        `${TWO}[environments.alpha]\ncommand = ["docker", "exec", "-i", "c", "ux", "exec-server"]\n`,
      ),
      requirements: requirements(
        '[environments.zeta]\nurl = "wss://z"\n[environments.gpu]\nurl = "wss://g"\n',
      ),
    });
    expect(resolved.environments.map((environment) => [environment.id, environment.kind])).toEqual([
      ['local', 'local'],
      ['gpu', 'websocket'],
      ['zeta', 'websocket'],
      ['alpha', 'command'],
      ['box', 'websocket'],
      ['dev', 'command'],
    ]);
    expect(resolved.defaultEnvironment).toBe('local');
    expect(resolved.allowedEnvironments).toBeUndefined();
    expect(resolveSessionSettings({})).toMatchObject({
      environments: [{ id: 'local', kind: 'local' }],
      defaultEnvironment: 'local',
    });
  });

  it('layers default_environment: config < profile < -c < --env, and may name a requirements environment', () => {
    const user = userConfig(
      `default_environment = "box"\n${TWO}[profiles.remote]\ndefault_environment = "dev"\n[profiles.plain]\n`,
    );
    expect(resolveSessionSettings({ user }).defaultEnvironment).toBe('box');
    expect(resolveSessionSettings({ user, profile: 'plain' }).defaultEnvironment).toBe('box');
    expect(resolveSessionSettings({ user, profile: 'remote' }).defaultEnvironment).toBe('dev');
    expect(
      resolveSessionSettings({
        user,
        profile: 'remote',
        cli: { environment: { value: 'local', flag: '--env local' } },
      }).defaultEnvironment,
    ).toBe('local');
    const managed = requirements('[environments.gpu]\nurl = "wss://g"\n');
    expect(
      resolveSessionSettings({ user: userConfig('default_environment = "gpu"\n'), requirements: managed })
        .defaultEnvironment,
    ).toBe('gpu');
  });

  it('takes -c default_environment=NAME through the config parser, naming the argument', () => {
    const withOverrides = (...args: string[]) =>
      parseUserConfig(
        applyConfigOverrides(parseTomlDocument(TWO, FILE), args.map(parseConfigOverride), FILE),
      );
    const user = withOverrides('default_environment=dev');
    expect(user.session.defaultEnvironment).toEqual({
      value: 'dev',
      location: { file: '-c default_environment=dev' },
    });
    expect(resolveSessionSettings({ user }).defaultEnvironment).toBe('dev');
    expect(messageOf(() => resolveSessionSettings({ user: withOverrides('default_environment=bx') }))).toBe(
      '-c default_environment=bx: default_environment "bx" is not defined (did you mean "box"?); environments: local, box, dev',
    );
    expect(messageOf(() => withOverrides('default_environment=Box'))).toContain(
      '-c default_environment=Box: default_environment must be an environment name',
    );
    expect(
      resolveSessionSettings({ user: withOverrides('environments.box.cwd=/tmp') }).environments[1],
    ).toMatchObject({
      id: 'box',
      cwd: '/tmp',
    });
  });

  it('refuses a default_environment that is not defined, wherever it is written, with close matches', () => {
    expect(
      messageOf(() => resolveSessionSettings({ user: userConfig(`default_environment = "bxo"\n${TWO}`) })),
    ).toBe(
      `${FILE}:1:1: default_environment "bxo" is not defined (did you mean "box"?); environments: local, box, dev`,
    );
    expect(
      messageOf(() =>
        resolveSessionSettings({ user: userConfig('[profiles.unused]\ndefault_environment = "far-away"\n') }),
      ),
    ).toBe(`${FILE}:2:1: profiles.unused.default_environment "far-away" is not defined; environments: local`);
  });

  it('refuses a user environment that redefines a requirements one', () => {
    expect(
      messageOf(() =>
        resolveSessionSettings({
          user: userConfig('\n\n[environments.gpu]\ncommand = ["ssh", "gpu"]\n'),
          requirements: requirements('\n[environments.gpu]\nurl = "wss://gpu.corp"\n'),
        }),
      ),
    ).toBe(`${FILE}:3:2: environments.gpu is defined by requirements ${REQ}:2:2; it cannot be redefined`);
  });

  it('keeps to allowed_environments: user environments, defaults and flags', () => {
    const managed = requirements('allowed_environments = ["local", "box"]\n');
    expect(messageOf(() => resolveSessionSettings({ user: userConfig(TWO), requirements: managed }))).toBe(
      `${FILE}:1:2: environments.dev is not allowed here: allowed_environments = ["local", "box"] (${REQ}:1:1)`,
    );
    const user = userConfig('[environments.box]\nurl = "wss://box"\n');
    const resolved = resolveSessionSettings({ user, requirements: managed });
    expect(resolved.environments.map((environment) => environment.id)).toEqual(['local', 'box']);
    expect(resolved.allowedEnvironments).toEqual({
      values: ['local', 'box'],
      location: { file: REQ, line: 1, column: 1 },
    });

    const remoteOnly = requirements('allowed_environments = ["box"]\n');
    expect(
      messageOf(() =>
        resolveSessionSettings({
          user: userConfig(
            '[environments.box]\nurl = "wss://box"\n[profiles.p]\ndefault_environment = "local"\n',
          ),
          profile: 'p',
          requirements: remoteOnly,
        }),
      ),
    ).toBe(
      `${FILE}:4:1: profiles.p.default_environment "local" is not allowed here: allowed_environments = ["box"] (${REQ}:1:1)`,
    );
    const flagged = errorOf(() =>
      resolveSessionSettings({
        user,
        requirements: remoteOnly,
        cli: { environment: { value: 'local', flag: '--env local' } },
      }),
    );
    expect(ConfigError.isInstance(flagged) && flagged.file).toBe(REQ);
    expect(flagged.message).toBe(
      `${REQ}:1:1: environment "local" (from --env local) is not allowed here: allowed_environments = ["box"]`,
    );
  });

  it('forbids local when allowed_environments leaves it out, defaulting to the only remote environment', () => {
    const managed = requirements(
      'allowed_environments = ["box", "gpu"]\n[environments.gpu]\nurl = "wss://gpu"\n',
    );
    const resolved = resolveSessionSettings({ requirements: managed });
    expect(resolved.environments.map((environment) => environment.id)).toEqual(['gpu']);
    expect(resolved.defaultEnvironment).toBe('gpu');

    const user = userConfig('[environments.box]\nurl = "wss://box"\n');
    expect(messageOf(() => resolveSessionSettings({ user, requirements: managed }))).toBe(
      `${REQ}:1:1: allowed_environments = ["box", "gpu"] forbids local commands and allows 2 environments (gpu, box): set default_environment in ${FILE} to one of them, or choose one with --env`,
    );
    expect(
      resolveSessionSettings({
        user: userConfig('default_environment = "box"\n[environments.box]\nurl = "wss://box"\n'),
        requirements: managed,
      }).defaultEnvironment,
    ).toBe('box');
    expect(
      resolveSessionSettings({
        user,
        requirements: managed,
        cli: { environment: { value: 'box', flag: '--env box' } },
      }).defaultEnvironment,
    ).toBe('box');
    expect(
      messageOf(() =>
        resolveSessionSettings({ requirements: requirements('allowed_environments = ["box"]\n') }),
      ),
    ).toBe(
      `${REQ}:1:1: allowed_environments = ["box"] forbids local commands and none of these environments is defined: define one under [environments.<name>] in $UX_HOME/config.toml`,
    );
  });
});

describe('chooseEnvironment', () => {
  const resolved = resolveSessionSettings({ user: userConfig(`default_environment = "dev"\n${TWO}`) });

  it('gives the requested environment, else the default', () => {
    expect(chooseEnvironment(resolved)).toMatchObject({ id: 'dev', kind: 'command' });
    expect(chooseEnvironment(resolved, 'box')).toMatchObject({
      id: 'box',
      kind: 'websocket',
      tokenEnv: 'BOX_TOKEN',
    });
    expect(chooseEnvironment(resolved, 'local')).toEqual({ id: 'local', kind: 'local' });
  });

  it('refuses an unknown name, listing the known ones with close matches', () => {
    const error = errorOf(() => chooseEnvironment(resolved, 'bxo'));
    expect(error.code).toBe('invalid_arguments');
    expect(error.message).toBe(
      'unknown environment "bxo" (did you mean "box"?); environments: local, box, dev',
    );
    expect(messageOf(() => chooseEnvironment(resolved, 'zzzzzz'))).toBe(
      'unknown environment "zzzzzz"; environments: local, box, dev',
    );
  });

  it('refuses local when the requirements forbid it, naming the requirements file', () => {
    const managed = resolveSessionSettings({
      requirements: requirements('\nallowed_environments = ["gpu"]\n[environments.gpu]\nurl = "wss://gpu"\n'),
    });
    expect(chooseEnvironment(managed).id).toBe('gpu');
    const error = errorOf(() => chooseEnvironment(managed, 'local'));
    expect(ConfigError.isInstance(error)).toBe(true);
    expect(error.message).toBe(
      `${REQ}:2:1: environment "local" (from --env local) is not allowed here: allowed_environments = ["gpu"]`,
    );
  });
});

describe('environments in the tool plan', () => {
  const flags = { shell_tool: true, unified_exec: true, shell_zsh_fork: false, unified_exec_zsh_fork: false };
  const variant = (text: string): ExecCommandVariant =>
    planTools({
      flags,
      platform: 'linux',
      environments: toolPlanEnvironments(resolveSessionSettings({ user: userConfig(text) }).environments),
    }).execCommandVariant;

  it('maps environments to ids and remoteness', () => {
    expect(toolPlanEnvironments(resolveSessionSettings({ user: userConfig(TWO) }).environments)).toEqual([
      { id: 'local', remote: false },
      { id: 'box', remote: true },
      { id: 'dev', remote: true },
    ]);
  });

  it('offers environment_id only when there is more than one environment', () => {
    expect(variant('').environmentId).toBe(false);
    expect(variant(TWO).environmentId).toBe(true);
    const onlyRemote = planTools({
      flags,
      platform: 'linux',
      environments: toolPlanEnvironments(
        resolveSessionSettings({
          requirements: requirements(
            'allowed_environments = ["gpu"]\n[environments.gpu]\nurl = "wss://gpu"\n',
          ),
        }).environments,
      ),
    });
    expect(onlyRemote.execCommandVariant.environmentId).toBe(false);
    expect(onlyRemote.reasons).toContain('remote environments always run direct');
  });
});
