import { describe, expect, it } from 'vitest';
import { EXEC_SERVER_HELP, parseExecServerArgs } from './exec-server-args.js';
import { UsageError } from './usage-error.js';

describe('parseExecServerArgs', () => {
  it('reads stdio and ws listeners', () => {
    expect(parseExecServerArgs(['--listen', 'stdio']).listen).toEqual({ kind: 'stdio' });
    expect(parseExecServerArgs(['--listen=stdio://']).listen).toEqual({ kind: 'stdio' });
    const ws = parseExecServerArgs(['--listen', 'ws://127.0.0.1:0', '--ws-token-sha256', 'a'.repeat(64)]);
    expect(ws).toMatchObject({
      listen: { kind: 'websocket', host: '127.0.0.1', port: 0 },
      onDisconnect: 'keep',
    });
    expect(
      parseExecServerArgs([
        '--listen',
        'ws://[::1]:4500',
        '--ws-auth',
        'capability-token',
        '--ws-token-file',
        '/t',
      ]).listen,
    ).toEqual({ kind: 'websocket', host: '::1', port: 4500 });
    expect(
      parseExecServerArgs([
        '--listen',
        'stdio',
        '--on-disconnect',
        'terminate',
        '--sandbox-backends',
        'bwrap, x',
      ]),
    ).toMatchObject({ onDisconnect: 'terminate', sandboxBackends: ['bwrap', 'x'] });
    expect(parseExecServerArgs(['--listen', 'stdio', '--keep-detached', '90'])).toMatchObject({
      onDisconnect: 'keep',
      detachedTimeoutMs: 90_000,
    });
  });

  it.each([
    [[], '--listen is required: --listen stdio or --listen ws://127.0.0.1:PORT'],
    [['--listen'], '--listen needs a value'],
    [['--listen', 'tcp://x:1'], '--listen "tcp://x:1" is neither stdio nor ws://IP:PORT'],
    [['--listen', 'ws://127.0.0.1'], 'is neither stdio nor ws://IP:PORT'],
    [['--listen', 'ws://127.0.0.1:70000', '--ws-token-file', '/t'], 'port 70000 is out of range'],
    [['--listen', 'wss://127.0.0.1:1'], 'put a TLS proxy in front of ws://'],
    [['--listen', 'ws://127.0.0.1:1'], 'WebSocket connections need a capability token'],
    [['--listen', 'ws://127.0.0.1:1', '--ws-token-file', '/a', '--ws-token-sha256', 'b'], 'exactly one of'],
    [['--listen', 'stdio', '--ws-token-file', '/a'], 'apply to --listen ws:// only'],
    [['--listen', 'stdio', '--ws-auth', 'signed-bearer-token'], 'the only mode is capability-token'],
    [['--listen', 'stdio', '--on-disconnect', 'maybe'], '--on-disconnect must be keep or terminate'],
    [['--listen', 'stdio', '--verbose'], 'unknown option "--verbose"'],
    [
      ['--listen', 'stdio', '--keep-detached', '0'],
      '--keep-detached takes whole seconds from 1 to 86400, got "0"',
    ],
    [['--listen', 'stdio', '--keep-detached', '1.5'], 'got "1.5"'],
    [
      ['--listen', 'stdio', '--on-disconnect', 'terminate', '--keep-detached', '5'],
      '--keep-detached applies to --on-disconnect keep',
    ],
  ])('refuses %j', (args, message) => {
    const error = (() => {
      try {
        parseExecServerArgs(args);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toContain(message);
    expect((error as UsageError).helpCommand).toBe('ux exec-server --help');
  });

  it('asks for help without other requirements', () => {
    expect(parseExecServerArgs(['--help']).help).toBe(true);
    expect(parseExecServerArgs(['-h', '--on-disconnect', 'terminate']).help).toBe(true);
  });

  it('has usage text naming every option it reads', () => {
    expect(EXEC_SERVER_HELP).toMatch(
      /^Usage: ux exec-server --listen <stdio \| ws:\/\/IP:PORT> \[options\]\n/,
    );
    for (const option of [
      '--ws-token-file',
      '--ws-token-sha256',
      '--ws-auth',
      '--on-disconnect',
      '--keep-detached',
      '--exit-on-stdin-close',
      '--sandbox-backends',
    ])
      expect(EXEC_SERVER_HELP).toContain(`  ${option} `);
  });
});
