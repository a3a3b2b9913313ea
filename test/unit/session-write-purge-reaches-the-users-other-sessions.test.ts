// A session holder's write evicts the user's other sessions (steps/session-lifecycle.ts). The process
// that takes the write may not know whose session it is (another worker or replica read its
// userinfo): its purge of the slot then says the session wrote, and a receiver that knows the
// session's user evicts that user's other sessions too. The same against the real wiki:
// test/integration/a-session-write-refreshes-the-users-other-sessions.test.ts.
import { describe, expect, it } from 'vitest';
import { applyLocalPurge } from '../../src/cache/purge.js';
import { parsePurgeMessage } from '../../src/cache/redis/purges.js';
import { CacheStore } from '../../src/cache/store.js';
import { SessionUsers } from '../../src/policy/session-users.js';

const URL_KEY = '/w/api.php?action=query&format=json&meta=userinfo';

function storeWithSessions(...slots: string[]): CacheStore {
  const store = new CacheStore({ sharedMaxBytes: 1 << 20, sessionMaxBytes: 1 << 20, maxEntries: 100, graceMs: 0, staleIfErrorMs: 0, now: () => 1_000 });
  for (const slot of slots) storeSession(store, slot, ['*']);
  return store;
}

/** A session's userinfo answer, with these dependencies. */
function storeSession(store: CacheStore, slot: string, deps: string[]): void {
  store.set('session', `${URL_KEY}\n${slot}`, {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('{}'),
    storedAt: 1_000,
    ttlMs: 60_000,
    urlKey: URL_KEY,
    modules: ['query', 'userinfo'],
    slot,
    deps,
  });
}

const held = (store: CacheStore, slot: string) => store.get('session', `${URL_KEY}\n${slot}`) !== undefined;

describe('a purge of a session that wrote', () => {
  const users = new SessionUsers();
  users.note('Aa-browser', 'Alice');
  users.note('Bb-bot', 'Alice');
  users.note('Cc-other', 'Bob');

  it('evicts the other sessions of its user, when this process knows whose session it is', () => {
    const store = storeWithSessions('Aa-browser', 'Bb-bot', 'Cc-other');
    expect(applyLocalPurge(store, { kind: 'slot', slot: 'Aa-browser', wrote: true }, users)).toBe(2);
    expect([held(store, 'Aa-browser'), held(store, 'Bb-bot'), held(store, 'Cc-other')]).toEqual([false, false, true]);
  });

  it('a plain session purge (a logout elsewhere) evicts that session only', () => {
    const store = storeWithSessions('Aa-browser', 'Bb-bot', 'Cc-other');
    expect(applyLocalPurge(store, { kind: 'slot', slot: 'Aa-browser' }, users)).toBe(1);
    expect([held(store, 'Aa-browser'), held(store, 'Bb-bot'), held(store, 'Cc-other')]).toEqual([false, true, true]);
  });

  it('a session nobody here knows: that session only', () => {
    const store = storeWithSessions('Dd-unknown', 'Bb-bot');
    expect(applyLocalPurge(store, { kind: 'slot', slot: 'Dd-unknown', wrote: true }, users)).toBe(1);
    expect(held(store, 'Bb-bot')).toBe(true);
  });

  it('crosses the Redis channel with what it says (and nothing but `true` counts as having written)', () => {
    expect(parsePurgeMessage(JSON.stringify({ kind: 'slot', slot: 'Aa-browser', wrote: true }))).toEqual({ kind: 'slot', slot: 'Aa-browser', wrote: true });
    expect(parsePurgeMessage(JSON.stringify({ kind: 'slot', slot: 'Aa-browser' }))).toEqual({ kind: 'slot', slot: 'Aa-browser' });
    expect(parsePurgeMessage(JSON.stringify({ kind: 'slot', slot: 'Aa-browser', wrote: 'yes' }))).toEqual({ kind: 'slot', slot: 'Aa-browser' });
  });
});

describe('what counts as a session`s write', () => {
  it('any method but GET and HEAD; a GET on the streamed paths that carries a token (index.php`s rollback, patrol and watch links)', async () => {
    const { wrote } = await import('../../src/mediawiki/modules.js');
    expect(wrote('POST')).toBe(true);
    expect(wrote('GET')).toBe(false);
    expect(wrote('GET', 'title=P&action=rollback&from=X&token=abc%2B%5C')).toBe(true);
    expect(wrote('GET', 'title=P&action=markpatrolled&rcid=5&token=abc')).toBe(true);
    expect(wrote('GET', 'title=P&action=edit&wpEditToken=abc')).toBe(true);
    expect(wrote('GET', 'title=P&to%6Ben=abc')).toBe(true);
    expect(wrote('GET', 'title=Tokens&action=view')).toBe(false);
    expect(wrote('HEAD', 'title=P&action=history')).toBe(false);
    // The e-mail links: the token is a sub-page.
    expect(wrote('GET', '', '/wiki/Special:ConfirmEmail/0123456789abcdef0123456789abcdef')).toBe(true);
    expect(wrote('GET', 'title=Special:InvalidateEmail/0123456789abcdef0123456789abcdef', '/w/index.php')).toBe(true);
    expect(wrote('GET', '', '/wiki/Special:ConfirmEmail')).toBe(false);
  });
});

describe('a user purge and the sessions no list names any more', () => {
  it('ends the answers stored while the session was known to be the user`s (dependencies.ts userTag)', async () => {
    const { userTag } = await import('../../src/policy/dependencies.js');
    const store = storeWithSessions('Cc-other');
    // Stored while this process knew Ee-forgotten to be Alice's; forgotten since.
    storeSession(store, 'Ee-forgotten', ['*', userTag('Alice')]);
    const users = new SessionUsers();
    users.note('Aa-browser', 'Alice');
    expect(applyLocalPurge(store, { kind: 'user', user: 'Alice' }, users)).toBe(1);
    expect([held(store, 'Ee-forgotten'), held(store, 'Cc-other')]).toEqual([false, true]);
    // And a slot purge of a write by a session known to be Alice's.
    storeSession(store, 'Ee-forgotten', [userTag('Alice')]);
    expect(applyLocalPurge(store, { kind: 'slot', slot: 'Aa-browser', wrote: true }, users)).toBe(1);
    expect(held(store, 'Ee-forgotten')).toBe(false);
  });

  it('forgets the session least recently in use, not the one learned first', () => {
    const users = new SessionUsers(1_000, 3);
    users.note('s1', 'Alice');
    users.note('s2', 'Alice');
    users.note('s3', 'Alice');
    expect(users.inUse('s1')).toBe('Alice');
    users.note('s4', 'Alice');
    expect(users.slots('Alice')).toEqual(['s3', 's1', 's4']);
    expect(users.userOf('s2')).toBeUndefined();
    expect(users.inUse('s2')).toBeUndefined();
    expect(users.slots('Alice')).toEqual(['s3', 's1', 's4']);
  });
});
