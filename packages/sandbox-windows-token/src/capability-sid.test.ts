import { describe, expect, it } from 'vitest';
import { capabilitySidFor, randomRunSid } from './capability-sid.js';

describe('capabilitySidFor', () => {
  it('is a capability SID, stable for a sandbox id and its set of roots', () => {
    const sid = capabilitySidFor('default', ['C:\\w', 'D:\\cache']);
    expect(sid).toMatch(/^S-1-15-3-1024(-\d{1,10}){8}$/);
    expect(capabilitySidFor('default', ['d:\\CACHE', 'c:\\W', 'C:\\w'])).toBe(sid);
  });

  it('changes with the sandbox id and with the roots, so old grants never widen a new sandbox', () => {
    const base = capabilitySidFor('default', ['C:\\w']);
    expect(capabilitySidFor('other', ['C:\\w'])).not.toBe(base);
    expect(capabilitySidFor('default', ['C:\\w', 'C:\\extra'])).not.toBe(base);
    expect(capabilitySidFor('default', [])).not.toBe(base);
  });

  it('makes a new run SID each time', () => {
    expect(randomRunSid()).toMatch(/^S-1-15-3-1024(-\d{1,10}){8}$/);
    expect(randomRunSid()).not.toBe(randomRunSid());
  });
});
