import { describe, expect, it } from 'vitest';
import { recordingReviewer } from '../../test/fakes.js';
import { checkOrchestratorSettings } from './check-orchestrator-settings.js';
import { reviewRoute } from './review-route.js';

const autoReviewer = recordingReviewer({ type: 'approved' }, 'auto');

describe('reviewRoute', () => {
  it('sends on-request and granular questions to a configured automatic reviewer, others to the user', () => {
    expect(reviewRoute({ strictAutoReview: false, autoReviewer, approvalPolicy: 'on-request' })).toBe('auto');
    expect(
      reviewRoute({
        strictAutoReview: false,
        autoReviewer,
        approvalPolicy: {
          granular: {
            sandbox_approval: true,
            rules: true,
            skill_approval: true,
            request_permissions: true,
            mcp_elicitations: true,
          },
        },
      }),
    ).toBe('auto');
    expect(reviewRoute({ strictAutoReview: false, autoReviewer, approvalPolicy: 'untrusted' })).toBe('user');
    expect(
      reviewRoute({ strictAutoReview: false, autoReviewer: undefined, approvalPolicy: 'on-request' }),
    ).toBe('user');
  });

  it('sends everything to the automatic reviewer under strict automatic review', () => {
    expect(reviewRoute({ strictAutoReview: true, autoReviewer, approvalPolicy: 'untrusted' })).toBe('auto');
  });
});

describe('checkOrchestratorSettings', () => {
  it('refuses strict automatic review without an automatic reviewer', () => {
    expect(() => checkOrchestratorSettings({ strictAutoReview: true })).toThrow(/no autoReviewer is set/);
    expect(() => checkOrchestratorSettings({ strictAutoReview: true, autoReviewer })).not.toThrow();
    expect(() => checkOrchestratorSettings({})).not.toThrow();
  });
});
