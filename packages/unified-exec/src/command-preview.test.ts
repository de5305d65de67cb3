import { describe, expect, it } from 'vitest';
import { COMMAND_PREVIEW_CHARS, commandPreview } from './command-preview.js';

describe('commandPreview', () => {
  it('shows a short command as typed, quoted', () => {
    expect(commandPreview(['bash', '-lc', 'echo hi'])).toBe("bash -lc 'echo hi'");
  });

  it('shows control characters as escapes', () => {
    expect(commandPreview(['bash', '-lc', 'touch x #\r\x1b[2K  ok'])).toBe(
      "bash -lc 'touch x #\\r\\e[2K  ok'",
    );
    const long = commandPreview(['bash', '-lc', `${'y'.repeat(300)}\x1b[2J`]);
    expect(long).toMatch(/^bash -lc 'y+… \(315 bytes\)$/);
    expect(commandPreview(['bash', '-lc', `\x1b]0;t\x07${'y'.repeat(300)}`])).toMatch(
      /^bash -lc '\\e]0;t\\x07y+… \(/,
    );
  });

  it('cuts a long one and says how big it was', () => {
    const preview = commandPreview(['bash', '-lc', 'y'.repeat(5_000_000)]);
    expect(preview.length).toBeLessThan(COMMAND_PREVIEW_CHARS + 40);
    expect(preview).toMatch(/^bash -lc y+… \(5000009 bytes\)$/);
  });
});
