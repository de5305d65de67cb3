import { visibleJson } from '@ux/protocol-utils';
import type { ExecPolicy } from '../policy/exec-policy.js';
import type { RuleWriter } from '../policy/rule-file-appender.js';

/** The session's prefix rules: the configured ones plus the amendments approved in this session. */
export interface SessionExecPolicy {
  current(): ExecPolicy;
  /**
   * Adds an approved `allow` prefix: listeners run at once, before anything decides with the new
   * rules; then the rule writer saves it. A listener or a save that fails is a warning, never a
   * refusal: the approval stands for this session.
   */
  addAmendment(prefix: string[]): Promise<void>;
  onChange(listener: () => void): () => void;
}

export function createSessionExecPolicy(options: {
  initial: ExecPolicy;
  ruleWriter?: RuleWriter;
  onWarning?: (message: string) => void;
}): SessionExecPolicy {
  let execPolicy = options.initial;
  const listeners = new Set<() => void>();
  return {
    current: () => execPolicy,
    async addAmendment(prefix) {
      execPolicy = execPolicy.withRule({
        pattern: prefix,
        decision: 'allow',
        source: { file: '(approved in this session)' },
      });
      for (const listener of listeners) {
        try {
          listener();
        } catch (error) {
          options.onWarning?.(
            `a rule-change listener threw: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
      }
      if (!options.ruleWriter) return;
      try {
        await options.ruleWriter(prefix);
      } catch (error) {
        options.onWarning?.(
          `the rule ${visibleJson(prefix)} applies for this session but could not be saved: ${
            error instanceof Error ? error.message : String(error)
          }`,
        );
      }
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
