import { describe, expect, it } from 'vitest';
import { opSchema } from './op.js';
import { eventToJson } from './ux-event.js';

describe('events and ops', () => {
  it('encodes output chunks as base64 for JSON and leaves other events as they are', () => {
    expect(
      eventToJson({
        type: 'exec_command_output_delta',
        call_id: 'c1',
        stream: 'stdout',
        chunk: new Uint8Array([104, 105, 255]),
      }),
    ).toEqual({ type: 'exec_command_output_delta', call_id: 'c1', stream: 'stdout', chunk: 'aGn/' });
    expect(eventToJson({ type: 'turn_aborted', reason: 'interrupted' })).toEqual({
      type: 'turn_aborted',
      reason: 'interrupted',
    });
  });

  it('accepts the three ops and nothing else', () => {
    for (const type of ['interrupt', 'clean_background_terminals', 'shutdown']) {
      expect(opSchema.parse({ type })).toEqual({ type });
    }
    expect(opSchema.safeParse({ type: 'kill' }).success).toBe(false);
    expect(opSchema.safeParse({ type: 'interrupt', force: true }).success).toBe(false);
  });
});
