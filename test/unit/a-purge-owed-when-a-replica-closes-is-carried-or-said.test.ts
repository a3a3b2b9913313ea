// A purge the shared tier could not carry is owed, and carried once it answers
// (src/cache/tiered-storage.ts). A reload or a worker's replacement closes the storage: what it
// still owed was thrown away without a word, and the shared tier and the other replicas kept
// serving what it had removed here until their TTL. Closing now tries once more, and says what
// it could not carry.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { CacheStore } from '../../src/cache/store.js';
import type { PurgeMessage } from '../../src/words/purge-message.js';
import type { SharedTier } from '../../src/cache/storage.js';
import { TieredStorage } from '../../src/cache/tiered-storage.js';
import { SessionUsers } from '../../src/policy/session-users.js';

/** A shared tier that takes purges only while `up`, and remembers them. */
function fakeTier() {
  const state = { up: false, carried: [] as PurgeMessage[], closed: false };
  const tier: Partial<SharedTier> = {
    get up() {
      return state.up;
    },
    purge: (message: PurgeMessage) => {
      if (!state.up) return Promise.resolve(null);
      state.carried.push(message);
      return Promise.resolve(1);
    },
    close: () => {
      state.closed = true;
      return Promise.resolve();
    },
  };
  return { state, tier: tier as SharedTier };
}

function storage(tier: SharedTier, lines: Record<string, unknown>[]) {
  const store = new CacheStore({ sharedMaxBytes: 1 << 20, sessionMaxBytes: 1 << 20, maxEntries: 100, graceMs: 0, staleIfErrorMs: 0, now: Date.now });
  const log = pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s) as Record<string, unknown>) });
  return new TieredStorage({ store, users: new SessionUsers(), now: Date.now, log }, () => tier);
}

const PURGE: PurgeMessage = { kind: 'url', urlKey: '/w/api.php?action=query&format=json&titles=Owed' };

describe('a purge still owed when the storage closes', () => {
  it('is carried when the shared tier answers by then', async () => {
    const { state, tier } = fakeTier();
    const lines: Record<string, unknown>[] = [];
    const s = storage(tier, lines);
    expect((await s.purge(PURGE)).redisPurged).toBeNull();
    // Back, and closed before the retry timer's next turn.
    state.up = true;
    await s.close();
    expect(state.carried).toEqual([PURGE]);
    expect(state.closed).toBe(true);
    expect(lines.some((l) => l['redisPurge'] === 'dropped')).toBe(false);
  });

  it('is said, as an error, when the shared tier still does not answer', async () => {
    const { state, tier } = fakeTier();
    const lines: Record<string, unknown>[] = [];
    const s = storage(tier, lines);
    await s.purge(PURGE);
    await s.purge({ ...PURGE, urlKey: `${PURGE.kind === 'url' ? PURGE.urlKey : ''}2` });
    await s.close();
    expect(state.carried).toEqual([]);
    const dropped = lines.find((l) => l['redisPurge'] === 'dropped');
    expect(dropped).toMatchObject({ level: 50, owed: 2 });
  });

  it('a carry under way when it closes is let finish before the tier closes', async () => {
    const { state, tier } = fakeTier();
    let release: () => void = () => undefined;
    const slow = tier.purge;
    const lines: Record<string, unknown>[] = [];
    const s = storage(tier, lines);
    await s.purge(PURGE);
    state.up = true;
    // The retry timer's carry, held at the shared tier.
    (tier as { purge: SharedTier['purge'] }).purge = (m) =>
      new Promise((resolve) => {
        release = () => void slow(m).then(resolve);
      });
    await new Promise((r) => setTimeout(r, 700));
    const closing = s.close();
    await new Promise((r) => setTimeout(r, 20));
    expect(state.closed).toBe(false);
    release();
    await closing;
    expect(state.carried).toEqual([PURGE]);
    expect(state.closed).toBe(true);
    expect(lines.some((l) => l['redisPurge'] === 'dropped')).toBe(false);
  });

  it('one owed after it closed (a purge heard while closing) is said at once, and no retry is left running', async () => {
    const { tier } = fakeTier();
    const lines: Record<string, unknown>[] = [];
    const s = storage(tier, lines);
    await s.close();
    await s.purge(PURGE);
    expect(lines.find((l) => l['redisPurge'] === 'dropped')).toMatchObject({ level: 50 });
    expect((s as unknown as { owedTimer?: unknown }).owedTimer).toBeUndefined();
  });

  it('with an heir (a reload’s next gateway), what it owes at its close and after goes to the heir, not dropped', async () => {
    const { tier } = fakeTier();
    const lines: Record<string, unknown>[] = [];
    const s = storage(tier, lines);
    const inherited: unknown[] = [];
    s.handOwedTo((owed) => inherited.push(owed));
    await s.purge(PURGE);
    await s.close();
    await s.purge(PURGE);
    // A gap handed to it once closed (a worker's carry-gap, a retired gateway's) goes on too.
    s.adoptOwed({ messages: [], overflow: true });
    expect(inherited).toEqual([
      { messages: [PURGE], overflow: false },
      { messages: [PURGE], overflow: false },
      { messages: [], overflow: true },
    ]);
    expect(lines.some((l) => l['redisPurge'] === 'dropped')).toBe(false);
    expect((s as unknown as { owedTimer?: unknown }).owedTimer).toBeUndefined();
  });
});
