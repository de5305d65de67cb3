import { describe, expect, it } from 'vitest';
import { formatSeatbeltViolations, parseSeatbeltViolation } from './seatbelt-violation.js';

describe('parseSeatbeltViolation', () => {
  it('reads process, pid, operation, target and the collector tag', () => {
    expect(
      parseSeatbeltViolation('Sandbox: cat(4242) deny(1) file-read-data /Users/me/.ssh/id_rsa ux-sbx-0a1b-7'),
    ).toEqual({
      process: 'cat',
      pid: 4242,
      operation: 'file-read-data',
      target: '/Users/me/.ssh/id_rsa',
      tag: 'ux-sbx-0a1b-7',
    });
    expect(
      parseSeatbeltViolation('Sandbox: Google Chrome H(12) deny(1) network-outbound 1.2.3.4:443'),
    ).toEqual({
      process: 'Google Chrome H',
      pid: 12,
      operation: 'network-outbound',
      target: '1.2.3.4:443',
    });
    expect(parseSeatbeltViolation('Sandbox: sh(1) deny(1) forbidden-sandbox-reinit')).toMatchObject({
      operation: 'forbidden-sandbox-reinit',
      target: '',
    });
  });

  it('ignores lines that are not violations', () => {
    expect(
      parseSeatbeltViolation('Filtering the log data using "eventMessage CONTAINS ..."'),
    ).toBeUndefined();
    expect(parseSeatbeltViolation('Sandbox: cat(1) allow file-read-data /x')).toBeUndefined();
  });
});

describe('formatSeatbeltViolations', () => {
  it('lists each distinct violation once and stays within the bound', () => {
    const violation = { process: 'cat', pid: 1, operation: 'file-read-data', target: '/x' };
    expect(formatSeatbeltViolations([violation, violation])).toBe(
      '\n=== Sandbox denials ===\n(cat) file-read-data /x\n',
    );
    expect(formatSeatbeltViolations([])).toBe('');
    const many = Array.from({ length: 100 }, (_, i) => ({ ...violation, target: `/file-${i}` }));
    const text = formatSeatbeltViolations(many, 200);
    expect(text.length).toBeLessThanOrEqual(203);
    expect(text.endsWith('…\n')).toBe(true);
  });
});
