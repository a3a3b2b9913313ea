// Every kind of purge is recorded for the store guard (cache/guards.ts): an answer asked for
// before a PURGE of its URL, a logout or rights change of its session, or an admin purge of its
// module, and received after it, is not stored (store.ts invalidatedSince). And a user's rights
// change reaches sessions this process never learned were the user's, through the slots the
// purge message names (cache/purge.ts). The same against Redis and the real wiki:
// test/integration/purge-during-fetch.test.ts.
import { describe, expect, it } from 'vitest';
import { applyLocalPurge, type PurgeMessage, purgeEverywhere } from '../../src/cache/purge.js';
import { parsePurgeMessage, SLOTS_PER_MESSAGE, userMessages } from '../../src/cache/redis/purges.js';
import { CacheStore } from '../../src/cache/store.js';
import { SessionUsers } from '../../src/policy/session-users.js';

const newStore = () => new CacheStore({ sharedMaxBytes: 1 << 20, sessionMaxBytes: 1 << 20, maxEntries: 100, graceMs: 0, staleIfErrorMs: 0, now: () => 1_000 });
const URL_KEY = '/w/api.php?action=query&format=json&meta=userinfo';
const fetched = { urlKey: URL_KEY, slot: 'Aa-slot', modules: ['query', 'userinfo'], deps: ['*'] };
const entry = (slot: string | undefined, urlKey = URL_KEY) => ({
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: Buffer.from('{}'),
  storedAt: 1_000,
  ttlMs: 60_000,
  urlKey,
  modules: ['query', 'userinfo'],
  slot,
  deps: ['*'],
});

describe('a purge made while an answer is on its way', () => {
  it('nothing purged meanwhile: the answer is stored', () => {
    const store = newStore();
    const mark = store.invalidationMark();
    expect(store.invalidatedSince(fetched, mark)).toBe(false);
  });

  it('PURGE of its URL: not stored; another URL is', () => {
    const store = newStore();
    const mark = store.invalidationMark();
    store.purgeUrl(URL_KEY);
    expect(store.invalidatedSince(fetched, mark)).toBe(true);
    expect(store.invalidatedSince({ ...fetched, urlKey: `${URL_KEY}&x=1` }, mark)).toBe(false);
    // Asked for after the purge: stored.
    expect(store.invalidatedSince(fetched, store.invalidationMark())).toBe(false);
  });

  it('logout of its session: not stored; another session`s answer and shared answers are', () => {
    const store = newStore();
    const mark = store.invalidationMark();
    store.evictSession('Aa-slot');
    expect(store.invalidatedSince(fetched, mark)).toBe(true);
    expect(store.invalidatedSince({ ...fetched, slot: 'Bb-slot' }, mark)).toBe(false);
    expect(store.invalidatedSince({ ...fetched, slot: undefined }, mark)).toBe(false);
  });

  it('sessions are guarded by bucket (the slot`s first two characters): a bounded number of guards whatever the writes', () => {
    const store = newStore();
    const mark = store.invalidationMark();
    store.evictSession('Aa-other-session');
    expect(store.invalidatedSince(fetched, mark)).toBe(true);
    expect(store.invalidatedSince({ ...fetched, slot: 'Ab-slot' }, mark)).toBe(false);
  });

  it('admin purge of one of its modules: not stored', () => {
    const store = newStore();
    const mark = store.invalidationMark();
    store.purgeModule('userinfo');
    expect(store.invalidatedSince(fetched, mark)).toBe(true);
    expect(store.invalidatedSince({ ...fetched, modules: ['query', 'siteinfo'] }, mark)).toBe(false);
  });

  it('admin purge by prefix (or any test): nothing fetched before it is stored', () => {
    const store = newStore();
    const mark = store.invalidationMark();
    store.purgeWhere((e) => e.urlKey.startsWith('/w/api.php?action=parse'));
    expect(store.invalidatedSince(fetched, mark)).toBe(true);
  });

  it('a rights change of its user: not stored, through the slots the message names', () => {
    const store = newStore();
    const mark = store.invalidationMark();
    applyLocalPurge(store, { kind: 'user', user: 'Vandal', slots: ['Aa-slot'] }, new SessionUsers());
    expect(store.invalidatedSince(fetched, mark)).toBe(true);
  });
});

describe("a user's rights change", () => {
  it("evicts the sessions the message names, though this process never learned they were the user's", () => {
    const store = newStore();
    store.set('session', `${URL_KEY}\na`, entry('Aa-slot'));
    store.set('session', `${URL_KEY}\nb`, entry('Bb-slot'));
    expect(applyLocalPurge(store, { kind: 'user', user: 'Vandal', slots: ['Aa-slot'] }, new SessionUsers())).toBe(1);
    expect(store.get('session', `${URL_KEY}\na`)).toBeUndefined();
    expect(store.get('session', `${URL_KEY}\nb`)).toBeDefined();
  });

  it('without Redis, tells the other workers the sessions this one knows are the user`s', async () => {
    const users = new SessionUsers();
    users.note('Aa-slot', 'Vandal');
    users.note('Cc-slot', 'Someone else');
    const told: PurgeMessage[] = [];
    await purgeEverywhere(newStore(), undefined, { kind: 'user', user: 'Vandal' }, { publish: (m) => told.push(m) }, users);
    expect(told).toEqual([{ kind: 'user', user: 'Vandal', slots: ['Aa-slot'] }]);
  });

  it('travels on the Redis channel in messages of at most SLOTS_PER_MESSAGE slots, read back as sent', () => {
    const slots = Array.from({ length: SLOTS_PER_MESSAGE + 1 }, (_, i) => `slot-${i}`.padEnd(22, 'x'));
    const messages = userMessages('Vandal', slots);
    expect(messages.map((m) => (m.kind === 'user' ? m.slots?.length : -1))).toEqual([SLOTS_PER_MESSAGE, 1]);
    for (const m of messages) expect(parsePurgeMessage(JSON.stringify(m))).toEqual(m);
    expect(userMessages('Vandal', [])).toEqual([{ kind: 'user', user: 'Vandal' }]);
  });

  it('a channel message with slots that are not strings, or too many, is ignored', () => {
    expect(parsePurgeMessage(JSON.stringify({ kind: 'user', user: 'V', slots: [1] }))).toBeUndefined();
    expect(parsePurgeMessage(JSON.stringify({ kind: 'user', user: 'V', slots: 'Aa-slot' }))).toBeUndefined();
    const many = Array.from({ length: SLOTS_PER_MESSAGE + 1 }, () => 's');
    expect(parsePurgeMessage(JSON.stringify({ kind: 'user', user: 'V', slots: many }))).toBeUndefined();
  });
});
