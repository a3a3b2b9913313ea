// policy/answer-policy.ts: one object per answer says whether it is stored, where, how long,
// with which headers, and why not; each question asked of it once. One fact per test.
import { describe, expect, it } from 'vitest';
import { AnswerPolicy, type AnswerContext, type BodyFacts, type DependencyFacts } from '../../src/policy/answer-policy.js';
import type { Identity } from '../../src/mediawiki/identity.js';
import { SMAXAGE_PROBE } from '../../src/policy/request.js';

const ANON: Identity = { kind: 'anonymous', loginSuppressed: false, carriesCredentials: false };
const SESSION: Identity = { kind: 'session', slot: 's1', variant: 'v1', unknownCredential: false };
const CONTEXT: AnswerContext = {
  requester: ANON,
  rule: {},
  probed: true,
  path: 'store',
  defaults: { ttlPublicSeconds: 300, ttlSessionSeconds: 60 },
  settings: { ttlMaxSeconds: 86_400, ttlJitterRatio: 0, ttlClockSeconds: 5, maxEntryBytes: 1_000_000 },
  random: () => 0,
};
// What MediaWiki 1.39 answers a probed anonymous siteinfo request (ApiMain::sendCacheHeaders).
const PUBLIC = {
  status: 200,
  headers: {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': `s-maxage=${SMAXAGE_PROBE}, max-age=600, public`,
    vary: 'Accept-Encoding, Treat-as-Untrusted, Cookie',
    'content-length': '123',
    'x-request-id': 'the-wikis-own',
  },
};
const CLEAN: BodyFacts = {
  complete: true,
  bodyBytes: 2_000,
  debuginfoKept: false,
  echoesCredentials: false,
  holdsRequesterAddress: false,
  fetchedWithClientCookies: false,
};
const NO_DEPS: DependencyFacts = { clock: false, invalidatedMeanwhile: false };

describe('AnswerPolicy', () => {
  it('a public answer to an anonymous requester: shared, for the default TTL', () => {
    const v = new AnswerPolicy(PUBLIC, CONTEXT).verdict(CLEAN, () => NO_DEPS, 0);
    expect(v).toEqual({ store: true, tier: 'shared', mode: 'public', ttlMs: 300_000, dependencies: NO_DEPS });
  });

  it('the dependencies are not read for an answer the body already rules out', () => {
    let asked = 0;
    const v = new AnswerPolicy(PUBLIC, CONTEXT).verdict({ ...CLEAN, bodyBytes: 2_000_000 }, () => (asked++, NO_DEPS), 0);
    expect(v).toEqual({ store: false, reason: 'too-large', mode: 'public' });
    expect(asked).toBe(0);
  });

  it('nor for one the headers rule out', () => {
    let asked = 0;
    const withCookie = { status: 200, headers: { ...PUBLIC.headers, 'set-cookie': ['a=b'] } };
    const v = new AnswerPolicy(withCookie, CONTEXT).verdict(CLEAN, () => (asked++, NO_DEPS), 0);
    expect(v).toMatchObject({ store: false, reason: 'set-cookie' });
    expect(asked).toBe(0);
  });

  it('a change that reached the answer while it was fetched: not stored', () => {
    const v = new AnswerPolicy(PUBLIC, CONTEXT).verdict(CLEAN, () => ({ ...NO_DEPS, invalidatedMeanwhile: true }), 0);
    expect(v).toEqual({ store: false, reason: 'invalidated', mode: 'public' });
  });

  it('an answer carrying the wiki`s clock is kept no longer than the clock cap', () => {
    const v = new AnswerPolicy(PUBLIC, CONTEXT).verdict(CLEAN, () => ({ ...NO_DEPS, clock: true }), 0);
    expect(v).toMatchObject({ store: true, ttlMs: 5_000 });
  });

  it('the client gets the Cache-Control it would have had without the probe, no length, no wiki request id', () => {
    const headers = new AnswerPolicy(PUBLIC, CONTEXT).responseHeaders();
    expect(headers['cache-control']).toBe('s-maxage=0, max-age=600, public');
    expect(headers['content-length']).toBeUndefined();
    expect(headers['x-request-id']).toBeUndefined();
  });

  it('a session holder`s stored answer never says public', () => {
    const headers = new AnswerPolicy(PUBLIC, { ...CONTEXT, requester: SESSION }).responseHeaders();
    expect(headers['cache-control']).toBe('private, must-revalidate, max-age=600');
    expect(headers['expires']).toBeUndefined();
  });

  it('a passed answer`s headers are only relayed (the delivery step speaks for the requester)', () => {
    const passed = { status: 200, headers: { ...PUBLIC.headers, 'cache-control': 'max-age=600, public' } };
    const headers = new AnswerPolicy(passed, { ...CONTEXT, requester: SESSION, probed: false, path: 'pass' }).responseHeaders();
    expect(headers['cache-control']).toBe('max-age=600, public');
  });

  it('an entry stored as gzip varies on Accept-Encoding; the identity one keeps the wiki`s Vary', () => {
    const noAcceptEncoding = { status: 200, headers: { ...PUBLIC.headers, vary: 'Treat-as-Untrusted, Cookie' } };
    const policy = new AnswerPolicy(noAcceptEncoding, CONTEXT);
    expect(policy.storedHeaders('gzip')['vary']).toBe('Treat-as-Untrusted, Cookie, Accept-Encoding');
    expect(policy.storedHeaders('identity')['vary']).toBe('Treat-as-Untrusted, Cookie');
  });

  it('the headers are read once: asking again gives the same answer object', () => {
    const policy = new AnswerPolicy(PUBLIC, CONTEXT);
    expect(policy.storable()).toBe(policy.storable());
    expect(policy.responseHeaders()).toBe(policy.responseHeaders());
  });
});
