// The budget of bytes each client's misses may store (limits/client-budget.ts StoreBudget): a token bucket in
// bytes per client, on an injected clock.
import { describe, expect, it } from 'vitest';
import { StoreBudget } from '../../src/limits/client-budget.js';

const budget = (over: Partial<ConstructorParameters<typeof StoreBudget>[0]> = {}) =>
  new StoreBudget({ bytesPerSecond: 1_000, burstBytes: 10_000, maxClients: 100, ...over });

describe('client store budget', () => {
  it('takes up to its burst at once, then refuses until the rate has refilled what an entry needs', () => {
    const b = budget();
    expect(b.take('a', 4_000, 0)).toBe(true);
    expect(b.take('a', 4_000, 0)).toBe(true);
    // 2,000 left.
    expect(b.take('a', 3_000, 0)).toBe(false);
    // A refusal takes nothing: 2,000 still, plus 1,000 a second.
    expect(b.take('a', 3_000, 999)).toBe(false);
    expect(b.take('a', 3_000, 1_000)).toBe(true);
    expect(b.take('a', 1, 1_000)).toBe(false);
  });

  it('refills no further than its burst', () => {
    const b = budget();
    expect(b.take('a', 10_000, 0)).toBe(true);
    // An hour later: the burst, not 3.6 MB.
    expect(b.take('a', 10_000, 3_600_000)).toBe(true);
    expect(b.take('a', 1, 3_600_000)).toBe(false);
  });

  it('a full bucket takes one entry larger than its burst, and the debt is paid back before the next store', () => {
    const b = budget();
    expect(b.take('a', 25_000, 0)).toBe(true);
    // -15,000: 15 s to get back to 0, 16 s to 1,000.
    expect(b.take('a', 1_000, 15_000)).toBe(false);
    expect(b.take('a', 1_000, 16_000)).toBe(true);
    // Not full: an entry above what is left is refused, however large the burst it exceeds.
    expect(b.take('a', 25_000, 16_000)).toBe(false);
    expect(b.take('a', 25_000, 26_000)).toBe(true);
  });

  it('each client has a bucket of its own', () => {
    const b = budget();
    expect(b.take('a', 10_000, 0)).toBe(true);
    expect(b.take('a', 1_000, 0)).toBe(false);
    expect(b.take('b', 10_000, 0)).toBe(true);
  });

  it('0 bytes a second is off: everything is taken, no bucket kept', () => {
    const b = budget({ bytesPerSecond: 0 });
    for (let i = 0; i < 100; i++) expect(b.take('a', 1_000_000, 0)).toBe(true);
    expect(b.enabled).toBe(false);
    expect(b.size).toBe(0);
  });

  it('keeps at most maxClients buckets, forgetting the least recently charged (which then starts full)', () => {
    const b = budget({ maxClients: 3 });
    expect(b.take('a', 10_000, 0)).toBe(true);
    for (const c of ['b', 'c', 'd']) b.take(c, 1, 0);
    expect(b.size).toBe(3);
    // 'a' was forgotten: a full bucket again.
    expect(b.take('a', 10_000, 0)).toBe(true);
    for (let i = 0; i < 1_000; i++) b.take(`flood${i}`, 1, 0);
    expect(b.size).toBe(3);
  });
});
