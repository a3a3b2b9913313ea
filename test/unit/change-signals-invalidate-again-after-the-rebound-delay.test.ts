// A change's tags are invalidated at once and again WIKIEDGE_REBOUND_PURGE_MS later
// (src/invalidation/signals.ts reboundLater: MediaWiki's post-send updates write what some answers
// read after the change's signals came), rebounds falling due within REBOUND_BATCH_MS of each other
// made as one purge, none with the delay 0, and a closing gateway makes those still due at once.
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ChangeSignals } from '../../src/invalidation/signals.js';
import type { PurgeMessage } from '../../src/cache/purge.js';
import type { Change } from '../../src/policy/changes.js';

const TTL = { ttlPublicSeconds: 300, ttlSessionSeconds: 60 };

function signals(reboundMs: number, now: () => number = () => Date.now()) {
  const purged: string[][] = [];
  const causes: string[] = [];
  const options: ({ readonly rebound?: boolean } | undefined)[] = [];
  const s = new ChangeSignals({
    purge: async (m: PurgeMessage, o?: { readonly rebound?: boolean }) => {
      if (m.kind === 'tags') purged.push([...m.tags].sort());
      options.push(o);
      return { purged: 1 };
    },
    purgeHere: async () => ({ purged: 0 }),
    metrics: { event: () => {}, invalidated: (cause) => causes.push(cause), lag: () => {} },
    log: pino({ level: 'silent' }),
    now,
    shortTtl: TTL,
    followedTtl: TTL,
    reboundMs,
  });
  return { s, purged, causes, options };
}

const change = (...tags: string[]): Change => ({ source: 'purge', type: 'edit', tags, users: [], at: undefined });

describe('change signals rebound', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('invalidates the same tags once more after the delay, and only then', async () => {
    const { s, purged, causes } = signals(1_000);
    await s.apply([change('p:Item:Q1', 't:item')]);
    expect(purged).toEqual([['p:Item:Q1', 't:item']]);
    await vi.advanceTimersByTimeAsync(999);
    expect(purged).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(purged).toEqual([
      ['p:Item:Q1', 't:item'],
      ['p:Item:Q1', 't:item'],
    ]);
    expect(causes).toEqual(['purge', 'rebound']);
    expect(s.pendingRebounds).toBe(0);
    // A rebound is not rebounded.
    await vi.advanceTimersByTimeAsync(5_000);
    expect(purged).toHaveLength(2);
  });

  it('changes within a tenth of a second share one rebound; later ones have their own', async () => {
    const { s, purged } = signals(1_000);
    await s.apply([change('p:A')]);
    await vi.advanceTimersByTimeAsync(50);
    await s.apply([change('p:B')]);
    await vi.advanceTimersByTimeAsync(200);
    await s.apply([change('p:C')]);
    expect(s.pendingRebounds).toBe(2);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(purged.slice(3)).toEqual([['p:A', 'p:B'], ['p:C']]);
  });

  it('makes none with the delay 0', async () => {
    const { s, purged } = signals(0);
    await s.apply([change('p:A')]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(purged).toEqual([['p:A']]);
    expect(s.pendingRebounds).toBe(0);
  });

  it("a rebound is purged as one (the shared tier does not keep it to carry later), the change's own is not", async () => {
    const { s, options } = signals(1_000);
    await s.apply([change('p:A')]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(options).toEqual([undefined, { rebound: true }]);
  });

  it('a reload hands the pending rebounds on: the next gateway makes each when it was due', async () => {
    const old = signals(1_000);
    const next = signals(1_000);
    await old.s.apply([change('p:A')]);
    await vi.advanceTimersByTimeAsync(400);
    next.s.adoptRebounds(old.s.takeRebounds());
    expect(old.s.pendingRebounds).toBe(0);
    await vi.advanceTimersByTimeAsync(599);
    expect(next.purged).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(next.purged).toEqual([['p:A']]);
    await old.s.close();
    expect(old.purged).toEqual([['p:A']]);
  });

  it('a change applied after close schedules none (its storage is closing)', async () => {
    const { s, purged } = signals(1_000);
    await s.close();
    await s.apply([change('p:A')]);
    expect(s.pendingRebounds).toBe(0);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(purged).toEqual([['p:A']]);
  });

  it('after the clock steps back, a change does not join a batch due earlier than its delay', async () => {
    let clock = 1_000_000;
    const { s, purged } = signals(1_000, () => clock);
    await s.apply([change('p:A')]);
    clock -= 60_000;
    await s.apply([change('p:B')]);
    expect(s.pendingRebounds).toBe(2);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(purged.slice(2)).toEqual([['p:A'], ['p:B']]);
  });

  it('a closing gateway makes the rebounds still due at once', async () => {
    const { s, purged } = signals(10_000);
    await s.apply([change('p:A')]);
    await s.close();
    expect(purged).toEqual([['p:A'], ['p:A']]);
    expect(s.pendingRebounds).toBe(0);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(purged).toHaveLength(2);
  });
});
