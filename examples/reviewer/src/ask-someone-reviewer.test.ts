import { describeConformance, reviewerConformanceChecks } from '@ux/protocol-testing';
import { createAskSomeoneReviewer } from './ask-someone-reviewer.js';

// Someone who answers a moment later; and someone who never answers, whom only the signal ends.
describeConformance(
  'reviewerConformanceChecks: createAskSomeoneReviewer, a person who answers',
  reviewerConformanceChecks(() =>
    createAskSomeoneReviewer({
      ask: () => new Promise((resolve) => setTimeout(() => resolve('yes'), 20)),
    }),
  ),
);

describeConformance(
  'reviewerConformanceChecks: createAskSomeoneReviewer, a person who says no',
  reviewerConformanceChecks(() => createAskSomeoneReviewer({ ask: async () => 'no' })),
);
