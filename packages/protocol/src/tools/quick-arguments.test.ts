import { describe, expect, it } from 'vitest';
import { isOp } from '../events/is-op.js';
import { opSchema } from '../events/op.js';
import { isReviewDecision } from '../review/is-review-decision.js';
import { reviewDecisionSchema } from '../review/review-decision.js';
import type { ExecCommandVariant } from './exec-command.js';
import { execCommandParameters } from './exec-command-parameters.js';
import { parseExecCommandArgs, parseShellCommandArgs, parseWriteStdinArgs } from './parse-tool-arguments.js';
import { quickExecCommandArgs, quickShellCommandArgs, quickWriteStdinArgs } from './quick-arguments.js';

// The quick checks may defer anything to the schemas, but must never accept what a schema refuses,
// nor accept with a different result. Random calls from a seeded generator, mostly near the edges.

function random(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

const VALUES: unknown[] = [
  '',
  ' ',
  '\t\n',
  'x',
  'ls -la',
  0,
  1,
  -1,
  1.5,
  250,
  2 ** 31 - 1,
  2 ** 31,
  2 ** 53,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  true,
  false,
  null,
  undefined,
  [],
  ['git', 'pull'],
  [''],
  ['a', 1],
  {},
  { network: { enabled: true } },
  { file_system: { read: ['/tmp'] } },
  'use_default',
  'require_escalated',
  'with_additional_permissions',
];

/** A value each parameter accepts, so that many generated calls are valid or nearly so. */
const GOOD: Record<string, unknown> = {
  cmd: 'make test',
  command: 'ls',
  workdir: '/tmp',
  shell: '/bin/bash',
  tty: true,
  login: false,
  yield_time_ms: 1000,
  max_output_tokens: 100,
  environment_id: 'local',
  sandbox_permissions: 'use_default',
  justification: 'needs the network',
  prefix_rule: ['git', 'pull'],
  additional_permissions: { network: { enabled: true } },
  session_id: 1000,
  chars: 'x',
  timeout_ms: 10,
};

function calls(keys: readonly string[], required: string, count: number, seed: number): unknown[] {
  const next = random(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)] as T;
  const value = (key: string) => (next() < 0.7 && key in GOOD ? GOOD[key] : pick(VALUES));
  const result: unknown[] = [null, [], 'not json', '{"broken":', 42];
  for (let i = 0; i < count; i++) {
    const call: Record<string, unknown> = {};
    if (next() < 0.9) call[required] = value(required);
    for (const key of keys) if (key !== required && next() < 0.25) call[key] = value(key);
    if (next() < 0.05) call.bogus = pick(VALUES);
    result.push(next() < 0.2 ? JSON.stringify(call) : call);
  }
  return result;
}

function expectSound<T>(
  quick: (raw: unknown) => T | undefined,
  schema: (raw: unknown) => { success: boolean; data?: T },
  raw: unknown,
): boolean {
  const accepted = quick(raw);
  if (accepted === undefined) return false;
  const parsed = schema(raw);
  expect(parsed.success, JSON.stringify(raw)).toBe(true);
  expect(accepted, JSON.stringify(raw)).toStrictEqual(parsed.data);
  return true;
}

const EXEC_KEYS = execCommandParameters({
  shell: true,
  login: true,
  environmentId: true,
  additionalPermissions: true,
});

describe('quick argument checks', () => {
  const variants: ExecCommandVariant[] = [
    {},
    { shell: false, login: false },
    { environmentId: true, additionalPermissions: true },
  ];

  it.each(variants)('never accept an exec_command call the schema refuses (%j)', (variant) => {
    let accepted = 0;
    for (const raw of calls(EXEC_KEYS, 'cmd', 4000, 7)) {
      if (
        expectSound(
          (r) => quickExecCommandArgs(r, variant),
          (r) => parseExecCommandArgs(r, variant),
          raw,
        )
      )
        accepted++;
    }
    expect(accepted).toBeGreaterThan(50);
  });

  it('never accept a write_stdin or shell_command call the schema refuses', () => {
    let accepted = 0;
    for (const raw of calls(
      ['session_id', 'chars', 'yield_time_ms', 'max_output_tokens'],
      'session_id',
      4000,
      11,
    ))
      if (expectSound(quickWriteStdinArgs, parseWriteStdinArgs, raw)) accepted++;
    for (const raw of calls(['command', 'workdir', 'timeout_ms'], 'command', 4000, 13))
      if (expectSound(quickShellCommandArgs, parseShellCommandArgs, raw)) accepted++;
    expect(accepted).toBeGreaterThan(100);
  });

  it('accept the everyday calls, so the schemas stay unloaded for them', () => {
    expect(quickExecCommandArgs({ cmd: 'make test' })).toEqual({ cmd: 'make test' });
    expect(quickExecCommandArgs('{"cmd":"ls","tty":true,"yield_time_ms":1000}')).toEqual({
      cmd: 'ls',
      tty: true,
      yield_time_ms: 1000,
    });
    expect(
      quickExecCommandArgs({
        cmd: 'git pull',
        sandbox_permissions: 'require_escalated',
        justification: 'needs the network',
        prefix_rule: ['git', 'pull'],
      }),
    ).toBeDefined();
    expect(quickWriteStdinArgs({ session_id: 1000, chars: '\u0003', yield_time_ms: 500 })).toBeDefined();
    expect(quickShellCommandArgs({ command: 'ls', timeout_ms: 1000 })).toBeDefined();
  });

  it('leave every doubt to the schema', () => {
    expect(quickExecCommandArgs({ cmd: 'ls', shell: '/bin/zsh' }, { shell: false })).toBeUndefined();
    expect(
      quickExecCommandArgs({ cmd: 'ls', sandbox_permissions: 'with_additional_permissions' }),
    ).toBeUndefined();
    expect(quickExecCommandArgs({ cmd: 'ls', tty: undefined })).toBeUndefined();
    expect(quickWriteStdinArgs({ session_id: 2 ** 31 })).toBeUndefined();
  });
});

describe('isOp and isReviewDecision', () => {
  const candidates: unknown[] = [
    null,
    [],
    'interrupt',
    {},
    { type: 'interrupt' },
    { type: 'clean_background_terminals' },
    { type: 'shutdown' },
    { type: 'shutdown', extra: 1 },
    { type: 'bogus' },
    { type: 'approved' },
    { type: 'approved', x: 1 },
    { type: 'approved_for_session' },
    { type: 'denied' },
    { type: 'timed_out' },
    { type: 'abort' },
    { type: 'approved_execpolicy_amendment', amendment: ['git', 'pull'] },
    { type: 'approved_execpolicy_amendment', amendment: [''] },
    { type: 'approved_execpolicy_amendment', amendment: [] },
    { type: 'approved_execpolicy_amendment', amendment: [1] },
    { type: 'approved_execpolicy_amendment' },
    { type: 'network_policy_amendment', amendment: { host: 'example.com', action: 'allow' } },
    { type: 'network_policy_amendment', amendment: { host: 'example.com', action: 'deny' } },
    { type: 'network_policy_amendment', amendment: { host: '', action: 'allow' } },
    { type: 'network_policy_amendment', amendment: { host: 'a', action: 'maybe' } },
    { type: 'network_policy_amendment', amendment: { host: 'a', action: 'allow', x: 1 } },
    { type: 'approved', amendment: ['x'] },
  ];

  it.each(candidates)('agree with the schemas on %j', (value) => {
    expect(isOp(value)).toBe(opSchema.safeParse(value).success);
    expect(isReviewDecision(value)).toBe(reviewDecisionSchema.safeParse(value).success);
  });

  it('are stricter than the schemas about objects that are not plain data', () => {
    const inherited = Object.create({ type: 'approved' }) as unknown;
    expect(reviewDecisionSchema.safeParse(inherited).success).toBe(true);
    expect(isReviewDecision(inherited)).toBe(false);
    expect(isOp(Object.create({ type: 'interrupt' }))).toBe(false);
  });
});
