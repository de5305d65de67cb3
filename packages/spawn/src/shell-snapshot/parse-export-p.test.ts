import { describe, expect, it } from 'vitest';
import { parseExportP } from './parse-export-p.js';

describe('parseExportP', () => {
  it("reads dash's single-quoted values, including quotes and newlines", () => {
    const text = `export HOME='/root'\nexport V='a\nb'"'"'c'\nexport EMPTY=''\nexport UNSET\nexport PATH='/usr/bin:/bin'\n`;
    expect(Object.fromEntries(parseExportP(text))).toEqual({
      HOME: '/root',
      V: "a\nb'c",
      EMPTY: '',
      PATH: '/usr/bin:/bin',
    });
  });

  it('reads double quotes and backslashes the way a shell would', () => {
    expect(Object.fromEntries(parseExportP('export A="x\\"y\\\\z\\$w"\nexport B=plain\\ word\n'))).toEqual({
      A: 'x"y\\z$w',
      B: 'plain word',
    });
  });

  it('keeps bytes that are not UTF-8 (latin1 text)', () => {
    const text = Buffer.from([...Buffer.from("export R='"), 0xff, 0xfe, ...Buffer.from("'\n")]).toString(
      'latin1',
    );
    expect(Buffer.from(parseExportP(text).get('R')!, 'latin1')).toEqual(Buffer.from([0xff, 0xfe]));
  });

  it('skips lines that are not exports and stops at an unterminated quote', () => {
    expect(Object.fromEntries(parseExportP("noise\nexport A='1'\nexport B='never closed\n"))).toEqual({
      A: '1',
    });
  });
});
