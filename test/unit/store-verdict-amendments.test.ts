// policy.ts finalVerdict: what only the body tells amends evaluateAnswer's verdict. One fact per row.
import { describe, expect, it } from 'vitest';
import { finalVerdict, type InspectedFacts, type ResponseVerdict } from '../../src/policy/policy.js';

const SHARED: ResponseVerdict = { store: true, tier: 'shared', mode: 'public', ttlMs: 60_000 };
const SESSION: ResponseVerdict = { store: true, tier: 'session', mode: 'private', ttlMs: 10_000 };
const CLEAN: InspectedFacts = {
  complete: true,
  bodyBytes: 1_000,
  maxEntryBytes: 1_048_576,
  debuginfoKept: false,
  echoesCredentials: false,
  holdsRequesterAddress: false,
  fetchedWithClientCookies: false,
};

describe('finalVerdict', () => {
  it('a clean body keeps the verdict', () => {
    expect(finalVerdict(SHARED, CLEAN)).toBe(SHARED);
  });
  it('a verdict not to store stays one', () => {
    const no: ResponseVerdict = { store: false, reason: 'set-cookie', mode: 'private' };
    expect(finalVerdict(no, { ...CLEAN, debuginfoKept: true })).toBe(no);
  });
  it.each([
    ['a body still streaming', { complete: false }, 'too-large'],
    ['a body above the entry cap', { bodyBytes: 2_000_000 }, 'too-large'],
    ['debuginfo kept', { debuginfoKept: true }, 'debuginfo'],
    ['the request`s credential echoed', { echoesCredentials: true }, 'credential-echo'],
    ['the requester`s address, to be shared', { holdsRequesterAddress: true }, 'requester-address'],
    ['made with the client`s cookies, to be shared', { fetchedWithClientCookies: true }, 'client-cookies'],
  ] as const)('%s: not stored (%s)', (_what, facts, reason) => {
    expect(finalVerdict(SHARED, { ...CLEAN, ...facts })).toEqual({ store: false, reason, mode: 'public' });
  });
  it('the requester`s address in a session`s slot: not stored either (a slot made of a guessable credential is two clients`, class 54)', () => {
    expect(finalVerdict(SESSION, { ...CLEAN, holdsRequesterAddress: true })).toEqual({ store: false, reason: 'requester-address', mode: 'private' });
  });
  it('a session`s answer is made with its cookies, for its own slot: fine', () => {
    expect(finalVerdict(SESSION, { ...CLEAN, fetchedWithClientCookies: true })).toBe(SESSION);
  });
});
