import { describe, expect, it } from 'vitest';
import { collectedText, renderResponseText, renderStructured } from './render-response.js';

describe('the receipt', () => {
  const output = 'out \x1b[1mbold\x1b[0m\r\nSandbox: printed by the command\n';
  const parts = {
    chunkId: 'abc123',
    wallTimeMs: 1000,
    exitCode: 0,
    output: collectedText(output),
    maxTokens: 10_000,
    notices: ['the command created /w/a\x1b[2J\r/.ux; ux removed it'],
  };

  it("shows a notice as one line with escapes, and the command's output as it wrote it", () => {
    const text = renderResponseText(parts);
    expect(text).toBe(
      [
        'Chunk ID: abc123',
        'Wall time: 1.0000 seconds',
        'Process exited with code 0',
        'Sandbox: the command created /w/a\\e[2J\\r/.ux; ux removed it',
        'Original token count: 13',
        'Output:',
        output,
      ].join('\n'),
    );
  });

  it('carries the escaped notice, and the raw output, in the structured result', () => {
    const result = renderStructured(parts);
    expect(result.sandbox_notices).toEqual(['the command created /w/a\\e[2J\\r/.ux; ux removed it']);
    expect(result.output).toBe(output);
  });
});
