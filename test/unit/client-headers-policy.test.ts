// What the client is told (policy.ts responseHeaders, requesterCacheControl, sessionCacheControl,
// clientNoCache), on literal headers from the real MediaWiki 1.39 lab's recorded answers
// (test/unit/cache-policy-captures.test.ts holds the same answers, one row each).
import { describe, expect, it } from 'vitest';
import { bypassesCache, clientNoCache, requesterCacheControl, responseHeaders, sessionCacheControl } from '../../src/policy/policy.js';
import { SMAXAGE_PROBE } from '../../src/policy/request.js';
import type { Identity } from '../../src/mediawiki/identity.js';

const VARY_PUB = 'Accept-Encoding, Treat-as-Untrusted, Cookie';
const ANON: Identity = { kind: 'anonymous', loginSuppressed: false, carriesCredentials: false };
const SUPPRESSED_WITH_SESSION: Identity = { kind: 'anonymous', loginSuppressed: true, carriesCredentials: true };
const SESSION: Identity = { kind: 'session', slot: 's', variant: 'v', unknownCredential: false };

describe('responseHeaders: the client gets what the wiki would have sent for its own request', () => {
  it('siteinfo with maxage=60, probed (ApiMain::sendCacheHeaders: s-maxage, max-age, public and an Expires): our smaxage probe is undone (s-maxage=0, Expires at Unix time 1)', () => {
    const out = responseHeaders(
      {
        'cache-control': `s-maxage=${SMAXAGE_PROBE}, max-age=60, public`,
        expires: 'Fri, 20 Nov 2026 21:56:23 GMT',
        vary: VARY_PUB,
        'content-type': 'application/json; charset=utf-8',
        'x-request-id': 'wiki-id',
        'set-cookie': ['a=b'],
        'content-encoding': 'gzip',
        'content-length': '1693',
        connection: 'close',
      },
      { probed: true, perSession: false },
    );
    expect(out).toEqual({
      'cache-control': 's-maxage=0, max-age=60, public',
      expires: 'Thu, 01 Jan 1970 00:00:01 GMT',
      vary: VARY_PUB,
      'content-type': 'application/json; charset=utf-8',
    });
  });

  it('siteinfo without maxage, probed (s-maxage=<probe>, max-age=0, public): private, must-revalidate, max-age=0, no Expires', () => {
    const out = responseHeaders({ 'cache-control': `s-maxage=${SMAXAGE_PROBE}, max-age=0, public`, vary: VARY_PUB }, { probed: true, perSession: false });
    expect(out['cache-control']).toBe('private, must-revalidate, max-age=0');
    expect(out['expires']).toBeUndefined();
  });

  it('a module`s own setCacheMaxAge wins over the probe (ApiMain::sendCacheHeaders reads the (s)maxage parameters only if nobody called it): left as the wiki sent it', () => {
    const out = responseHeaders({ 'cache-control': 'max-age=3600, s-maxage=3600, public', expires: 'x' }, { probed: true, perSession: false });
    expect(out['cache-control']).toBe('max-age=3600, s-maxage=3600, public');
    expect(out['expires']).toBe('x');
  });

  it('a public answer to a session holder (uselang=content: ApiMain::setCacheMode downgrades public for uselang=user only) kept for a session: never public, no Expires', () => {
    const out = responseHeaders({ 'cache-control': 's-maxage=60, max-age=60, public', expires: 'x', vary: VARY_PUB }, { probed: false, perSession: true });
    expect(out['cache-control']).toBe('private, must-revalidate, max-age=60');
    expect(out['expires']).toBeUndefined();
  });
});

describe('sessionCacheControl', () => {
  it.each([
    [undefined, undefined],
    ['private, must-revalidate, max-age=0', 'private, must-revalidate, max-age=0'],
    ['s-maxage=60, max-age=60, public', 'private, must-revalidate, max-age=60'],
    ['max-age=3600, s-maxage=3600, public', 'private, must-revalidate, max-age=3600'],
    ['s-maxage=60', 'private, must-revalidate, max-age=0'],
    ['no-cache', 'no-cache'],
  ])('%s → %s', (given, expected) => {
    expect(sessionCacheControl(given)).toBe(expected);
  });
});

describe('requesterCacheControl: credentials never hear public', () => {
  it.each([
    ['anonymous: untouched', ANON, 's-maxage=60, max-age=60, public', undefined],
    [
      'login-suppressed with a session (origin=*: ApiMain answers as anonymous, MediaWiki-Login-Suppressed: true): private',
      SUPPRESSED_WITH_SESSION,
      's-maxage=60, max-age=60, public',
      'private, must-revalidate, max-age=60',
    ],
    ['login-suppressed with a session, private already', SUPPRESSED_WITH_SESSION, 'private, must-revalidate, max-age=0', 'private, must-revalidate, max-age=0'],
    ['login-suppressed with a session, no Cache-Control', SUPPRESSED_WITH_SESSION, undefined, 'private, must-revalidate, max-age=0'],
    ['a session holder passed a public answer', SESSION, 's-maxage=60, max-age=60, public', 'private, must-revalidate, max-age=60'],
    ['a session holder`s private answer: untouched', SESSION, 'private, must-revalidate, max-age=0', undefined],
    // Credentials in a shape the gateway cannot read (`x_session[]=1` beside a real session): passed, maybe logged in.
    ['an unsure requester passed a public answer', { kind: 'unsure' }, 's-maxage=60, max-age=60, public', 'private, must-revalidate, max-age=60'],
  ] as const)('%s', (_what, identity, given, expected) => {
    expect(requesterCacheControl(identity, given)).toBe(expected);
  });
});

describe('clientNoCache and bypassesCache', () => {
  it.each([
    [{ 'cache-control': 'no-cache' }, true],
    [{ 'cache-control': 'max-age=0, no-cache' }, true],
    [{ 'cache-control': 'No-Cache' }, true],
    [{ pragma: 'no-cache' }, true],
    [{ 'cache-control': 'no-cache="set-cookie"' }, false],
    [{ 'cache-control': 'max-age=0' }, false],
    [{}, false],
  ])('%j → %s', (headers, expected) => {
    expect(clientNoCache(headers)).toBe(expected);
  });

  it('only a session holder bypasses: a client`s no-cache never touches the shared tier', () => {
    expect(bypassesCache('session', { 'cache-control': 'no-cache' })).toBe(true);
    expect(bypassesCache('shared', { 'cache-control': 'no-cache' })).toBe(false);
  });
});
