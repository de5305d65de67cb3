import { describe, expect, it } from 'vitest';
import { OutputShownEarly, utf8Boundary } from './output-shown-early.js';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('OutputShownEarly', () => {
  it('shows each part once, and leaves the rest of the result', () => {
    const early = new OutputShownEarly();
    expect(early.next(undefined)).toBe('');
    expect(early.next(bytes('step 1\n'))).toBe('step 1\n');
    expect(early.next(bytes('step 1\n'))).toBe('');
    expect(early.next(bytes('step 1\nstep 2\n'))).toBe('step 2\n');
    expect(early.rest('step 1\nstep 2\nstep 3\n')).toBe('step 3\n');
  });

  it('never cuts a character in two', () => {
    const early = new OutputShownEarly();
    const text = bytes('é€😀');
    expect(early.next(text.subarray(0, 3))).toBe('é');
    expect(early.next(text.subarray(0, 6))).toBe('€');
    expect(early.next(text.subarray(0, 8))).toBe('');
    expect(early.next(text)).toBe('😀');
  });

  it('shows all of a result that does not continue what was shown, and all when nothing was', () => {
    const early = new OutputShownEarly();
    expect(early.rest('all\n')).toBe('all\n');
    early.next(bytes('first attempt\n'));
    expect(early.rest('second attempt\n')).toBe('second attempt\n');
  });

  it('utf8Boundary', () => {
    expect(utf8Boundary(bytes('ab'))).toBe(2);
    expect(utf8Boundary(bytes('a€').subarray(0, 2))).toBe(1);
    expect(utf8Boundary(bytes('a€').subarray(0, 3))).toBe(1);
    expect(utf8Boundary(bytes('a€'))).toBe(4);
    expect(utf8Boundary(new Uint8Array([0x80, 0x80]))).toBe(2);
  });
});
