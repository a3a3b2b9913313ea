// What the wiki receives from the client's headers (RFC 9110 §7.6.1): every header named in
// Connection is removed, so identity and keys, which read this view, never see one.
import { describe, expect, it } from 'vitest';
import { connectionNamesHeaders, forwardedView, upstreamRequestHeaders } from '../../src/http/forwarding.js';

describe('forwardedView', () => {
  it('returns the very same object when Connection names no header', () => {
    for (const connection of [undefined, 'keep-alive', 'close', 'Keep-Alive', 'keep-alive, close']) {
      const h = { cookie: 'a=1', ...(connection !== undefined && { connection }) };
      expect(forwardedView(h)).toBe(h);
    }
  });

  it('drops every header Connection names, case-insensitively, and keeps the rest', () => {
    const h = { connection: 'keep-alive, Treat-as-Untrusted,COOKIE', 'treat-as-untrusted': '1', cookie: 'wiki_session=s', origin: 'o' };
    expect(forwardedView(h)).toEqual({ connection: 'keep-alive, Treat-as-Untrusted,COOKIE', origin: 'o' });
  });

  it('agrees with what is sent upstream', () => {
    const h = { connection: 'x-forwarded-proto, authorization', 'x-forwarded-proto': 'https', authorization: 'Bearer t', accept: '*/*' };
    const sent = upstreamRequestHeaders(h, { peerAddress: '127.0.0.1', peerTrusted: true, protocol: 'http', requestId: 'r', sharedFetch: true });
    expect(sent['authorization']).toBeUndefined();
    // A Connection-listed X-Forwarded-Proto is dropped like any other: the gateway's own is sent.
    expect(sent['x-forwarded-proto']).toBe('http');
    const view = forwardedView(h);
    expect(view['authorization']).toBeUndefined();
    expect(view['x-forwarded-proto']).toBeUndefined();
  });
});

describe('connectionNamesHeaders (the fresh-hit path leaves such requests to the full one)', () => {
  it.each([
    [undefined, false],
    ['keep-alive', false],
    ['close', false],
    ['Keep-Alive', false],
    ['keep-alive, close', false],
    ['cookie', true],
    ['keep-alive, Treat-as-Untrusted', true],
    [['keep-alive', 'origin'], true],
  ] as const)('%j → %s', (value, expected) => {
    expect(connectionNamesHeaders(value as string | string[] | undefined)).toBe(expected);
  });
});

describe('a fetch without the client`s credentials (a shared entry, or its background refresh)', () => {
  it('sends no Cookie and none of the credential headers; other headers go as before', () => {
    const h = { cookie: 'x_session=1; resourceLoaderDebug=true', authorization: 'Bearer t', 'x-sso-user': 'alice', 'accept-language': 'de' };
    const ctx = { peerAddress: '127.0.0.1', peerTrusted: false, protocol: 'http' as const, requestId: 'r', sharedFetch: true };
    const without = upstreamRequestHeaders(h, { ...ctx, withoutCookies: true, credentialHeaders: ['authorization', 'x-sso-user'] });
    expect([without['cookie'], without['authorization'], without['x-sso-user']]).toEqual([undefined, undefined, undefined]);
    expect(without['accept-language']).toBe('de');
    const withThem = upstreamRequestHeaders(h, { ...ctx, withoutCookies: false, credentialHeaders: ['authorization', 'x-sso-user'] });
    expect([withThem['cookie'], withThem['authorization'], withThem['x-sso-user']]).toEqual([h.cookie, 'Bearer t', 'alice']);
  });
});

describe('header names with an underscore (PHP reads them as the dashed ones)', () => {
  it('never reach the wiki: X_Forwarded_Proto, Treat_as_Untrusted, X_Forwarded_For, and the dotted spellings PHP reads alike', () => {
    const h = {
      x_forwarded_proto: 'https',
      treat_as_untrusted: '1',
      x_forwarded_for: '10.9.9.9',
      'x.forwarded.proto': 'https',
      'treat.as.untrusted': '1',
      'accept-language': 'de',
    };
    const sent = upstreamRequestHeaders(h, { peerAddress: '127.0.0.1', peerTrusted: false, protocol: 'http', requestId: 'r', sharedFetch: true });
    expect(Object.keys(sent).filter((name) => !/^[a-z0-9-]+$/.test(name))).toEqual([]);
    expect(sent['x-forwarded-proto']).toBe('http');
    expect(sent['accept-language']).toBe('de');
  });
});
