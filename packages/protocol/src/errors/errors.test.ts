import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  InvalidArgumentsError,
  MissingCommandLineError,
  RejectedError,
  SandboxDeniedError,
  SandboxUnavailableError,
  SpawnFailedError,
  StdinClosedError,
  UnknownPluginError,
  UnknownProcessIdError,
} from './errors.js';
import { UxError } from './ux-error.js';

describe('errors', () => {
  it('recognises errors by marker, not by class identity', () => {
    const error = new UnknownProcessIdError(1000);
    expect(UxError.isInstance(error)).toBe(true);
    expect(UnknownProcessIdError.isInstance(error)).toBe(true);
    expect(StdinClosedError.isInstance(error)).toBe(false);
    // A copy from another package instance carries the same global symbols.
    const foreign = Object.assign(new Error('Unknown process id 7'), {
      [Symbol.for('ux.error')]: true,
      [Symbol.for('ux.error.unknown-process-id')]: true,
    });
    expect(UnknownProcessIdError.isInstance(foreign)).toBe(true);
    expect(UxError.isInstance(new Error('plain'))).toBe(false);
    expect(UxError.isInstance(null)).toBe(false);
    expect(UxError.isInstance('Unknown process id 7')).toBe(false);
  });

  it('renders the messages of docs/reference/door.md §14 and keeps structured fields', () => {
    expect(new UnknownProcessIdError(1000).message).toBe('Unknown process id 1000');
    expect(new StdinClosedError({ processId: 3, reason: 'no_stdin' }).message).toBe(
      'stdin is closed for this session; rerun exec_command with tty=true to keep stdin open',
    );
    expect(new StdinClosedError({ reason: 'exited' }).message).toBe(
      'failed to write to stdin: the process has exited',
    );
    expect(new MissingCommandLineError().code).toBe('missing_command_line');
    const denied = new SandboxDeniedError({ sandboxType: 'bwrap', exitCode: 1, output: '' });
    expect(denied.message).toBe('Process exited with code 1');
    expect(
      new SandboxDeniedError({ sandboxType: 'bwrap', exitCode: 1, output: 'Read-only file system' }).message,
    ).toBe('Read-only file system');
    const spawnFailed = new SpawnFailedError({ command: ['nope'], reason: 'No such file or directory' });
    expect(spawnFailed.message).toBe('failed to start nope: No such file or directory');
    expect(spawnFailed.toJSON()).toEqual({
      name: 'SpawnFailedError',
      code: 'spawn_failed',
      message: 'failed to start nope: No such file or directory',
      command: ['nope'],
      path: undefined,
      reason: 'No such file or directory',
    });
    expect(new RejectedError({ reason: 'rejected by user', source: 'user' }).message).toBe(
      'rejected by user',
    );
    expect(
      new SandboxUnavailableError({
        backend: 'bwrap',
        reason: 'bwrap not found',
        fix: 'apt-get install bubblewrap',
      }).message,
    ).toBe('sandbox "bwrap" unavailable: bwrap not found; apt-get install bubblewrap');
    expect(
      new InvalidArgumentsError({
        tool: 'exec_command',
        issues: [
          { path: 'cmd', message: 'is required' },
          { path: '', message: 'arguments must be a JSON object' },
        ],
      }).message,
    ).toBe('invalid exec_command arguments: cmd: is required; arguments must be a JSON object');
    expect(new UnknownPluginError({ kind: 'sandbox backend', id: 'x', available: [] }).message).toBe(
      'unknown sandbox backend "x"; available: (none registered)',
    );
  });

  it('formats config locations with whatever is known', () => {
    expect(new ConfigError({ file: '/a.toml', line: 3, column: 7, reason: 'bad' }).message).toBe(
      '/a.toml:3:7: bad',
    );
    expect(new ConfigError({ file: '/a.toml', line: 3, reason: 'bad' }).message).toBe('/a.toml:3: bad');
    expect(new ConfigError({ file: '/a.toml', reason: 'bad' }).message).toBe('/a.toml: bad');
  });

  it('keeps the cause when wrapping', () => {
    const cause = new Error('ENOENT');
    expect(new SpawnFailedError({ command: ['x'], reason: 'missing' }, { cause }).cause).toBe(cause);
  });
});
