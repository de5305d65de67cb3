import { describe, expect, it } from 'vitest';
import {
  type ControlSession,
  commandText,
  type PsProcess,
  parseSessionTarget,
  renderPs,
  resolveSessionTarget,
  sessionState,
} from './control-sessions.js';
import { controlSession } from './serve-sessions.js';

const session = (id: number, extra: Partial<ControlSession> = {}): ControlSession => ({
  id,
  command: ['/bin/bash', '-lc', 'sleep 100'],
  cwd: '/w',
  tty: false,
  environment: 'local',
  sandbox: 'bwrap',
  state: 'running',
  startedAt: 0,
  idleMs: 2500,
  lastLines: [],
  ...extra,
});

const process = (pid: number, sessions: ControlSession[], extra: Partial<PsProcess> = {}): PsProcess => ({
  protocol: 1,
  pid,
  kind: 'mcp',
  cwd: '/w',
  startedAt: 1_000,
  version: '0.2.0',
  sessions,
  ...extra,
});

describe('parseSessionTarget', () => {
  it('takes PID:SESSION and SESSION', () => {
    expect(parseSessionTarget('123:4567', 'attach')).toEqual({ pid: 123, session: 4567 });
    expect(parseSessionTarget('4567', 'kill')).toEqual({ session: 4567 });
  });

  it.each(['', 'abc', '12:', ':12', '0', '1:0', '-5', '1:2:3', '12 ', '99999999999'])(
    'refuses %j with the usage',
    (text) => {
      expect(() => parseSessionTarget(text, 'kill')).toThrow(/usage: ux kill PID:SESSION/);
    },
  );

  it('says a missing target is missing', () => {
    expect(() => parseSessionTarget(undefined, 'attach')).toThrow(/^missing the session; usage: ux attach/);
  });
});

describe('resolveSessionTarget', () => {
  const processes = [
    process(10, [session(1000), session(2000)]),
    process(20, [session(1000)], { kind: 'exec' }),
  ];

  it('finds a session by PID:SESSION and by a session only one process has', () => {
    expect(resolveSessionTarget({ pid: 20, session: 1000 }, processes).pid).toBe(20);
    expect(resolveSessionTarget({ session: 2000 }, processes).pid).toBe(10);
  });

  it('names the candidates when a bare session is ambiguous', () => {
    expect(() => resolveSessionTarget({ session: 1000 }, processes)).toThrow(
      'session 1000 is ambiguous: 10:1000 (mcp), 20:1000 (exec); name one as PID:SESSION',
    );
  });

  it('names the sessions there are when the target is unknown', () => {
    expect(() => resolveSessionTarget({ session: 3000 }, processes)).toThrow(
      'no ux process has a session 3000; the sessions are 10:1000, 10:2000, 20:1000',
    );
    expect(() => resolveSessionTarget({ pid: 10, session: 3000 }, processes)).toThrow(
      'ux process 10 has no session 3000; the sessions are 10:1000, 10:2000, 20:1000',
    );
    expect(() => resolveSessionTarget({ pid: 30, session: 1000 }, [])).toThrow(
      'no ux process 30 serves a control socket; no ux process has a session now',
    );
  });
});

describe('renderPs', () => {
  it('shows each process and its sessions with state, idle time, kind of stdin, sandbox and last lines', () => {
    const text = renderPs(
      [
        process(
          10,
          [
            session(1000, {
              lastLines: ['>>> ', '\u001b[1;32mok\u001b[0m \u001b]0;title\u0007bell\u0007'],
              tty: true,
              command: ['python3', '-q'],
            }),
            session(1001, { state: 'exited', exitCode: 143 }),
          ],
          { clientName: 'codex 1.2' },
        ),
        process(20, [], { kind: 'exec-server', error: 'gone' }),
        process(30, [], { kind: 'exec' }),
      ],
      61_000,
    );
    expect(text).toBe(
      [
        '10  ux mcp codex 1.2  started 1 min 0 s ago  /w',
        '  10:1000  running  idle 2.5 s  tty  local  sandbox bwrap  python3 -q',
        '      | >>> ',
        '      | ok bell\\x07',
        '  10:1001  exited with code 143  idle 2.5 s  pipe  local  sandbox bwrap  sleep 100',
        '20  ux exec-server  started 1 min 0 s ago  /w',
        '  (gone)',
        '30  ux exec  started 1 min 0 s ago  /w',
        '  no sessions',
        '',
      ].join('\n'),
    );
  });

  it('says when no ux process runs', () => {
    expect(renderPs([])).toMatch(/^no ux process is running/);
  });
});

describe('sessionState and commandText', () => {
  it('says waiting for input when the door knows it', () => {
    expect(sessionState({ state: 'running', waitingForInput: true })).toBe('waiting for input');
    expect(sessionState({ state: 'running' })).toBe('running');
    expect(sessionState({ state: 'exited', exitCode: 0 })).toBe('exited with code 0');
  });

  it("shows the shell's script, else the argv", () => {
    expect(commandText(['/bin/zsh', '-c', 'echo hi | wc'])).toBe('echo hi | wc');
    expect(commandText(['python3', '-c'])).toBe('python3 -c');
    expect(commandText(['ls', '-la', 'my dir'])).toBe("ls -la 'my dir'");
  });
});

describe('controlSession', () => {
  it("maps the door's process info, idle time from the last output", () => {
    expect(
      controlSession(
        {
          sessionId: 7,
          command: ['sh', '-c', 'x'],
          cwd: '/w',
          environment: 'local',
          tty: true,
          running: false,
          sandbox: 'none',
          callId: 'c',
          startedAt: 100,
          lastOutputAt: 400,
          exitCode: 2,
          lastLines: ['a'],
          waitingForInput: false,
        },
        1_000,
      ),
    ).toEqual({
      id: 7,
      command: ['sh', '-c', 'x'],
      cwd: '/w',
      tty: true,
      environment: 'local',
      sandbox: 'none',
      state: 'exited',
      exitCode: 2,
      waitingForInput: false,
      startedAt: 100,
      idleMs: 600,
      lastLines: ['a'],
    });
  });
});
