import { describe, expect, it } from 'vitest';
import { createExecPolicy } from '../policy/exec-policy.js';
import { createSessionExecPolicy } from './session-exec-policy.js';

describe('createSessionExecPolicy', () => {
  it('adds an approved prefix as an allow rule, telling listeners before the save', async () => {
    const order: string[] = [];
    const rules = createSessionExecPolicy({
      initial: createExecPolicy(),
      ruleWriter: async (prefix) => {
        order.push(`saved ${prefix.join(' ')}`);
      },
    });
    const unsubscribe = rules.onChange(() => order.push('changed'));
    expect(rules.current().matches(['cargo', 'test'])).toEqual([]);
    await rules.addAmendment(['cargo']);
    expect(
      rules
        .current()
        .matches(['cargo', 'test'])
        .map((match) => match.rule.decision),
    ).toEqual(['allow']);
    expect(order).toEqual(['changed', 'saved cargo']);
    unsubscribe();
    await rules.addAmendment(['make']);
    expect(order).toEqual(['changed', 'saved cargo', 'saved make']);
  });

  it('warns, and keeps the rule, when a listener throws or the save fails', async () => {
    const warnings: string[] = [];
    const rules = createSessionExecPolicy({
      initial: createExecPolicy(),
      ruleWriter: async () => {
        throw new Error('read-only file system');
      },
      onWarning: (message) => warnings.push(message),
    });
    rules.onChange(() => {
      throw new Error('broken listener');
    });
    await rules.addAmendment(['cargo']);
    expect(
      rules
        .current()
        .matches(['cargo'])
        .map((match) => match.rule.decision),
    ).toEqual(['allow']);
    expect(warnings).toEqual([
      'a rule-change listener threw: broken listener',
      'the rule ["cargo"] applies for this session but could not be saved: read-only file system',
    ]);
  });
});
