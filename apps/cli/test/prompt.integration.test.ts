import { seededRandom, useLeakCheck } from '@ux/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  expectNoneMatching,
  makeHome,
  pidsMatching,
  startUxInTerminal,
  type TerminalSession,
  uniqueMarker,
  warmUpTerminalSpawner,
} from './cli-harness.js';

beforeAll(warmUpTerminalSpawner);
useLeakCheck();

// A terminal session that outlives anything typed at it: the keys that would end it (Ctrl-C, Ctrl-\,
// Ctrl-Z as signals, Ctrl-D as end of input) are ignored, so the fuzz can check that only `exit`
// ends it.
const STUBBORN = 'trap "" INT QUIT TSTP; while :; do read -r line || sleep 0.2; done';

/** `ux exec --tty` of a session that keeps running, detached: the terminal shows `ux> `. */
async function detachedSession(marker: string): Promise<{ ux: TerminalSession; id: string }> {
  // "never": nothing typed at the prompt may stop it with an approval question.
  const home = makeHome({ config: 'approval_policy = "never"\n' });
  const ux = await startUxInTerminal(
    ['exec', '--tty', '--yield-ms', '250', '--', `: ${marker}; ${STUBBORN}`],
    home,
  );
  await ux.waitFor('Ctrl-] detaches]');
  await ux.type('\u001d');
  const detached = await ux.waitFor(/\[detached; session (\d+) keeps running\]/);
  await ux.waitFor('ux> ');
  return { ux, id: /session (\d+) keeps/.exec(detached)![1]! };
}

/** Types `line` and returns what ux showed until its next prompt, detaching when the line attached. */
async function run(ux: TerminalSession, line: string): Promise<string> {
  await ux.type(`${line}\r`);
  let shown = await ux.waitFor(/ux> |Ctrl-\] detaches\]/);
  if (shown.endsWith('detaches]')) {
    await ux.type('\u001d');
    shown += await ux.waitFor('ux> ');
  }
  return shown;
}

describe('the ux> prompt', () => {
  it('answers send without arguments with its usage, and the sessions keep running', async () => {
    const marker = uniqueMarker();
    const { ux, id } = await detachedSession(marker);
    expect(await run(ux, 'send')).toContain(`usage: send ID TEXT (the last session is ${id})`);
    expect(await run(ux, 'send hello')).toContain('send needs the session ID first, got "hello"');
    expect(await run(ux, `send ${id}`)).toContain(
      'send needs TEXT after the ID; to wait for output, use poll',
    );
    expect(ux.process.exitStatus()).toBeUndefined();
    expect(pidsMatching(marker).length).toBeGreaterThan(0);
    await ux.type('exit\r');
    expect(await ux.exitCode()).toBe(0);
    await expectNoneMatching(marker);
  });

  it('lists the live sessions under column headers', async () => {
    const marker = uniqueMarker();
    const { ux, id } = await detachedSession(marker);
    const listed = await run(ux, 'list');
    expect(listed).toMatch(/^ID {4,}MODE {2}WHERE {2}SANDBOX {2}COMMAND\r?$/m);
    expect(listed).toMatch(new RegExp(`^${id} +tty {3}local {2}bwrap {4}\\S.*${marker}`, 'm'));
    expect(await run(ux, 'list all')).toContain('unexpected "all"; list takes no arguments');
    expect(await run(ux, 'lst')).toContain('unknown command "lst" (did you mean "list"?); type "help"');
    await ux.type('exit\r');
    expect(await ux.exitCode()).toBe(0);
    await expectNoneMatching(marker);
  });

  it('clean ends every session and the prompt stays', async () => {
    const marker = uniqueMarker();
    const { ux, id } = await detachedSession(marker);
    // Typed at the prompt, so only the session's own processes carry it (ux's arguments carry `marker`).
    const second = uniqueMarker();
    expect(await run(ux, `exec sleep 300; : ${second}`)).toContain('Process running with session ID');
    expect(pidsMatching(second).length).toBeGreaterThan(0);
    const cleaned = await run(ux, 'clean');
    expect(cleaned).toMatch(new RegExp(`ended sessions (${id}, \\d+|\\d+, ${id})`));
    await expectNoneMatching(second);
    expect(await run(ux, 'list')).not.toMatch(new RegExp(`^(${id}|\\d+) +(tty|pipe) `, 'm'));
    expect(await run(ux, 'clean')).toContain('no session was running');
    expect(await run(ux, 'clean now')).toContain('unexpected "now"; clean takes no arguments');
    expect(ux.process.exitStatus()).toBeUndefined();
    await ux.type('exit\r');
    expect(await ux.exitCode()).toBe(0);
  });

  it('says what is wrong with each malformed argument', async () => {
    const marker = uniqueMarker();
    const { ux, id } = await detachedSession(marker);
    const cases: [string, string][] = [
      ['poll -1', 'a session ID is a positive number, got "-1"'],
      ['poll abc', 'a session ID is a number like those "list" shows, got "abc"'],
      ['poll 99999999999999999999999', 'got "99999999999999999999999"'],
      [`poll ${id} -5`, 'MS must not be negative, got "-5"'],
      [`poll ${id} 1e3`, 'MS must be a whole number of milliseconds, got "1e3"'],
      [`poll ${id} 10 more`, 'unexpected "more"; usage: poll [ID] [MS]'],
      ['poll 4', 'write_stdin failed: Unknown process id 4'],
      ['attach 4', 'no session 4 was started here'],
      [`attach ${id} ${id}`, `unexpected "${id}"; usage: attach [ID]`],
      ['exec', 'usage: exec CMD'],
      ['exec --version', '"--version" is not a command: a shell would take it for an option'],
    ];
    for (const [line, message] of cases) expect(await run(ux, line), line).toContain(message);
    // A mistyped ID does not become the default: a bare attach still means the live session.
    expect(await run(ux, 'attach')).toMatch(new RegExp(`session ${id}; .*Ctrl-\\] detaches\\]`));
    await ux.type('exit\r');
    expect(await ux.exitCode()).toBe(0);
    await expectNoneMatching(marker);
  });

  it('survives a seeded fuzz of every command with missing, extra and malformed arguments', async () => {
    const seed = Number(process.env.UX_FUZZ_SEED ?? 15);
    const random = seededRandom(seed);
    const marker = uniqueMarker();
    const { ux, id } = await detachedSession(marker);
    const ids = [
      id,
      '',
      '0',
      '4',
      '-1',
      '-0',
      '99999',
      '999999999999999999999999',
      'abc',
      '1e3',
      '0x10',
      '12.5',
      '١٢',
      'NaN',
      `${id}x`,
      `"${id}"`,
    ];
    const badMs = ['-5', 'abc', '1e3', '1.5', '-0.5', '99999999999999999999999999', 'Infinity', '0x10'];
    const texts = [
      'hello',
      '\\n',
      '\\u0003',
      '\\u0004',
      '\\u001a',
      '\\u001c',
      '\\',
      '\\u',
      '\\ud800',
      '\\x00',
      '"',
      '\\"',
      'a\\"b',
      '%s%n',
      '\\u00e9',
      'é 🙂',
      '\\t',
      '$(echo hi)',
      '\\\\',
      'null',
      '  spaced  ',
    ];
    const scripts = [
      '',
      'true',
      'echo fuzz',
      "'unterminated",
      'exit 3',
      ';;',
      '\\u0000',
      '-x',
      '--version',
      'ls /nonexistent',
      '"',
    ];
    const junk = ['', 'x', '--', '-', '--help', '-1', '99999999999999999999', '"', "'", '\\', '🙂'];
    const unknown = [
      'pol',
      'sned',
      'atach',
      'lst',
      'ecex',
      'x',
      '🙂',
      '--help',
      '-1',
      '0',
      'POLL',
      'Exit',
      '\\',
      '"',
    ];
    // The live session a third of the time, so the writes and attaches reach a real process.
    const session = () => (random.chance(0.3) ? id : random.pick(ids));
    const extra = () => (random.chance(0.3) ? ` ${random.pick(junk)}`.repeat(1 + random.int(2)) : '');
    const line = (): string => {
      switch (random.pick(['poll', 'send', 'attach', 'exec', 'list', 'help', 'unknown'] as const)) {
        case 'poll': {
          // A well-formed poll of the live session waits 5 s or more: the fuzz keeps to the others.
          const which = session();
          const live = which === '' || which === id;
          const ms = live || random.chance(0.5) ? random.pick(badMs) : String(random.int(300));
          return `poll ${which} ${ms}${extra()}`;
        }
        case 'send':
          return random.chance(0.2) ? `send${extra()}` : `send ${session()} ${random.pick(texts)}`;
        case 'attach':
          return `attach ${session()}${extra()}`;
        case 'exec':
          return `exec ${random.pick(scripts)}`;
        case 'list':
          return `list${extra()}`;
        case 'help':
          return `help${extra()}`;
        case 'unknown':
          return `${random.pick(unknown)}${extra()}`;
      }
    };
    const typed: string[] = [];
    for (let i = 0; i < 120; i++) {
      const next = line();
      typed.push(next);
      const shown = await run(ux, next);
      const context = `seed ${seed}, after typing:\n${typed.join('\n')}\n\nux showed:\n${shown}`;
      expect(ux.process.exitStatus(), context).toBeUndefined();
      // Every line is answered as a mistake, a receipt or a list: none as an unexpected failure.
      expect(shown, context).not.toMatch(/TypeError|unexpected error|the sessions keep running/);
    }
    expect(await run(ux, 'list')).toContain(marker);
    expect(pidsMatching(marker).length).toBeGreaterThan(0);
    // Leaving takes no argument, and ignores any: there must always be a way out.
    await ux.type('exit now\r');
    expect(await ux.exitCode()).toBe(0);
    await expectNoneMatching(marker);
  }, 180_000);
});
