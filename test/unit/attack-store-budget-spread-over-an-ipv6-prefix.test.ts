// The budget of bytes a client's misses may store (src/limits/client-budget.ts StoreBudget) is keyed by the
// client's address, an IPv6 one by its /64 (client-key.ts addressKey). A home delegation of a /56
// holds 256 /64s, each with a full bucket: one client stored about 1 GiB at once, four times the
// default 256 MiB tier, turning it over in seconds. Its /48 is charged too now, with the budget of
// CLIENTS_PER_IPV6_48 clients.
import { describe, expect, it } from 'vitest';
import { CLIENTS_PER_IPV6_48, ipv6NetworkOf, sessionStoreBudgetOptions, StoreBudget, storeBudgetOptions } from '../../src/limits/client-budget.js';
import { addressKey, clientKey } from '../../src/limits/client-key.js';

const MiB = 2 ** 20;
const options = storeBudgetOptions({ clientStoreBytesPerSecond: 'auto', cacheSharedMaxBytes: 256 * MiB, cacheMaxEntryBytes: MiB });

describe('the store budget of clients spread over an IPv6 prefix', () => {
  it('one /56 stores at most the budget of a few clients at once, not one per /64', () => {
    const budget = new StoreBudget(options);
    let stored = 0;
    for (let sub = 0; sub < 256; sub++) {
      const key = addressKey(`2001:db8:0:${sub.toString(16)}::1`);
      for (let i = 0; i < 4; i++) if (budget.take(key, MiB, 0)) stored += MiB;
    }
    expect(stored).toBeLessThanOrEqual(options.burstBytes * CLIENTS_PER_IPV6_48 + MiB);
    expect(stored).toBeLessThan(256 * MiB);
  });

  it('clients of other /48s keep their own budget', () => {
    const budget = new StoreBudget(options);
    for (let sub = 0; sub < 64; sub++) budget.take(addressKey(`2001:db8:0:${sub.toString(16)}::1`), MiB, 0);
    expect(budget.take(addressKey('2001:db8:1:1::1'), MiB, 0)).toBe(true);
    expect(budget.take('203.0.113.7', MiB, 0)).toBe(true);
  });

  it('names the /48 of a /64 key, and nothing for an IPv4 one', () => {
    expect(ipv6NetworkOf('2001:db8:1:2::/64')).toBe('2001:db8:1::/48');
    expect(ipv6NetworkOf('203.0.113.7')).toBeUndefined();
    expect(ipv6NetworkOf('u:Someone')).toBeUndefined();
  });
});

describe('the session tier`s store budget, sessions made up over an IPv6 prefix', () => {
  const session = sessionStoreBudgetOptions({ clientStoreBytesPerSecond: 'auto', cacheSessionMaxBytes: 64 * MiB, cacheMaxEntryBytes: MiB });
  /** A made-up session from `address`: its own key, and its address's group. */
  const madeUp = (address: string, n: number) =>
    clientKey(address, { kind: 'session', slot: `slot-${address}-${n}`, variant: '', unknownCredential: false }, () => undefined);

  it('a new session cookie on every request from every /64 of a /56 stores a few clients` worth at once, not the tier', () => {
    const budget = new StoreBudget(session);
    let stored = 0;
    for (let sub = 0; sub < 256; sub++) {
      for (let i = 0; i < 4; i++) {
        const c = madeUp(`2001:db8:0:${sub.toString(16)}::1`, i);
        if (budget.take(c.key, MiB, 0, c.group)) stored += MiB;
      }
    }
    expect(stored).toBeLessThanOrEqual(session.burstBytes * CLIENTS_PER_IPV6_48 + MiB);
    expect(stored).toBeLessThan(64 * MiB);
  });

  it('one IPv4 address`s made-up sessions together store as one client does', () => {
    const budget = new StoreBudget(session);
    let stored = 0;
    for (let i = 0; i < 100; i++) {
      const c = madeUp('198.51.100.7', i);
      if (budget.take(c.key, MiB, 0, c.group)) stored += MiB;
    }
    expect(stored).toBeLessThanOrEqual(session.burstBytes + MiB);
  });

  it('a user the gateway knows is charged to the user alone, never to the address`s unknown sessions', () => {
    const budget = new StoreBudget(session);
    for (let i = 0; i < 100; i++) {
      const c = madeUp('198.51.100.7', i);
      budget.take(c.key, MiB, 0, c.group);
    }
    const user = clientKey('198.51.100.7', { kind: 'session', slot: 'a-real-one', variant: '', unknownCredential: false }, () => 'Alice');
    expect(budget.take(user.key, MiB, 0)).toBe(true);
  });
});
