import { type ApprovalRequest, REVIEWER_SPECIFICATION_VERSION, type Reviewer } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { pausingReviewer } from './mcp-reviewer.js';

const request = { call_id: 'c', command: ['x'], cwd: '/', retry: false, available_decisions: ['approved'] };

describe('pausingReviewer', () => {
  it('pauses while questions are open, until the last one is answered, and resumes after a failure', async () => {
    const calls: boolean[] = [];
    const answers: (() => void)[] = [];
    const inner: Reviewer = {
      specificationVersion: REVIEWER_SPECIFICATION_VERSION,
      id: 'inner',
      review: () =>
        new Promise((resolve, reject) =>
          answers.push(() =>
            answers.length === 0 ? reject(new Error('gone')) : resolve({ type: 'approved' }),
          ),
        ),
    };
    const reviewer = pausingReviewer(inner, (paused) => calls.push(paused));
    const signal = new AbortController().signal;
    const first = reviewer.review(request as ApprovalRequest, { signal });
    const second = reviewer.review(request as ApprovalRequest, { signal });
    expect(calls).toEqual([true]);
    answers.shift()!();
    await first;
    expect(calls).toEqual([true]);
    answers.shift()!();
    await expect(second).rejects.toThrow('gone');
    expect(calls).toEqual([true, false]);
    expect(reviewer.id).toBe('inner');
  });
});
