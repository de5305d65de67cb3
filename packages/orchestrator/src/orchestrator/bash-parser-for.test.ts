import { describe, expect, it } from 'vitest';
import type { BashParser } from '../shell/bash-parser.js';
import { SIMPLE_SCRIPT_PARSER } from '../shell/simple-script.js';
import { bashParserFor } from './bash-parser-for.js';

const grammar = { name: 'grammar' } as unknown as BashParser;

describe('bashParserFor', () => {
  it('loads the grammar only for a script that needs it', async () => {
    let loads = 0;
    const parserFor = bashParserFor({
      loadBashParser: async () => {
        loads++;
        return grammar;
      },
    });
    expect(await parserFor(['/bin/bash', '-lc', 'make test'])).toBe(SIMPLE_SCRIPT_PARSER);
    expect(loads).toBe(0);
    expect(await parserFor(['/bin/bash', '-lc', 'make test && echo "$HOME"'])).toBe(grammar);
    expect(loads).toBe(1);
  });

  it('always uses the parser the host gave', async () => {
    const given = { name: 'given' } as unknown as BashParser;
    const parserFor = bashParserFor({
      bashParser: given,
      loadBashParser: async () => grammar,
    });
    expect(await parserFor(['/bin/bash', '-lc', 'make test'])).toBe(given);
    expect(await parserFor(['/bin/bash', '-lc', 'a && b'])).toBe(given);
  });
});
