import { describe, expect, it } from 'vitest';
import { COMMAND_PREVIEW_CHARS, commandPreview } from './command-preview.js';

describe('commandPreview', () => {
  it('shows a short command as typed, quoted', () => {
    expect(commandPreview(['bash', '-lc', 'echo hi'])).toBe("bash -lc 'echo hi'");
  });

  it('cuts a long one and says how big it was', () => {
    const preview = commandPreview(['bash', '-lc', 'y'.repeat(5_000_000)]);
    expect(preview.length).toBeLessThan(COMMAND_PREVIEW_CHARS + 40);
    expect(preview).toMatch(/^bash -lc y+… \(5000009 bytes\)$/);
  });
});
