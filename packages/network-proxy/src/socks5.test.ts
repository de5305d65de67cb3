import { describe, expect, it } from 'vitest';
import { parseSocksGreeting, parseSocksRequest, SocksReply, socksReply } from './socks5.js';

describe('SOCKS5 wire format', () => {
  it('reads a greeting only once it is complete', () => {
    expect(parseSocksGreeting(Buffer.from([0x05]))).toEqual({ kind: 'incomplete' });
    expect(parseSocksGreeting(Buffer.from([0x05, 0x02, 0x00]))).toEqual({ kind: 'incomplete' });
    const greeting = parseSocksGreeting(Buffer.from([0x05, 0x02, 0x00, 0x02, 0xaa]));
    expect(greeting).toMatchObject({ kind: 'ok', methods: [0x00, 0x02] });
    expect(greeting.kind === 'ok' && [...greeting.rest]).toEqual([0xaa]);
    expect(parseSocksGreeting(Buffer.from([0x05, 0x00]))).toMatchObject({ kind: 'invalid' });
    expect(parseSocksGreeting(Buffer.from([0x04, 0x01, 0x00]))).toMatchObject({ kind: 'invalid' });
  });

  it('reads requests of the three address types', () => {
    const domain = parseSocksRequest(
      Buffer.from([0x05, 0x01, 0x00, 0x03, 0x04, ...Buffer.from('a.bc'), 0x01, 0xbb, 0x99]),
    );
    expect(domain).toMatchObject({
      kind: 'ok',
      request: { command: 1, addressType: 3, host: 'a.bc', port: 443 },
    });
    expect(domain.kind === 'ok' && [...domain.rest]).toEqual([0x99]);
    expect(parseSocksRequest(Buffer.from([0x05, 0x02, 0x00, 0x01, 10, 0, 0, 5, 0x00, 0x50]))).toMatchObject({
      kind: 'ok',
      request: { command: 2, addressType: 1, host: '10.0.0.5', port: 80 },
    });
    const v6 = Buffer.from([0x05, 0x01, 0x00, 0x04, ...new Array(15).fill(0), 1, 0x1f, 0x90]);
    expect(parseSocksRequest(v6)).toMatchObject({
      kind: 'ok',
      request: { addressType: 4, host: '0:0:0:0:0:0:0:1', port: 8080 },
    });
  });

  it('waits for the rest of a request, and tells bad address types from other garbage', () => {
    expect(parseSocksRequest(Buffer.from([0x05, 0x01, 0x00, 0x03, 0x05, 0x61]))).toEqual({
      kind: 'incomplete',
    });
    expect(parseSocksRequest(Buffer.from([0x05, 0x01, 0x00, 0x01, 1, 2, 3, 4, 0x00]))).toEqual({
      kind: 'incomplete',
    });
    expect(parseSocksRequest(Buffer.from([0x05, 0x01, 0x00, 0x09, 0, 0]))).toEqual({
      kind: 'bad_address_type',
      addressType: 9,
    });
    expect(parseSocksRequest(Buffer.from([0x05, 0x01, 0x00, 0x03, 0x00, 0, 80]))).toMatchObject({
      kind: 'invalid',
    });
    expect(parseSocksRequest(Buffer.from([0x04, 0x01, 0x00, 0x01]))).toMatchObject({ kind: 'invalid' });
  });

  it('writes replies with the bound address', () => {
    expect([...socksReply(SocksReply.notAllowedByRuleset)]).toEqual([5, 2, 0, 1, 0, 0, 0, 0, 0, 0]);
    expect([...socksReply(SocksReply.succeeded, { address: '127.0.0.1', port: 0x1234 })]).toEqual([
      5, 0, 0, 1, 127, 0, 0, 1, 0x12, 0x34,
    ]);
    expect([...socksReply(SocksReply.succeeded, { address: '2001:db8::1', port: 80 })]).toEqual([
      5, 0, 0, 4, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 80,
    ]);
    expect([
      ...socksReply(SocksReply.succeeded, { address: '::ffff:10.0.0.1', port: 1 }).subarray(4, 20),
    ]).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1]);
  });
});
