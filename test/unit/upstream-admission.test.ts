// The pieces of admission to the wiki (src/limits): the budget per client, the gate, and which
// address a request is charged to. Time is injected; no timers are waited on except the gate's
// queue timeout (tens of ms).
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { AddressMatcher } from '../../src/words/address-list.js';
import { ClientClosedError, GatewayError } from '../../src/words/errors.js';
import { clientAddress } from '../../src/limits/client-key.js';
import { ClientBudget, UncachedUnderWay } from '../../src/limits/client-budget.js';
import { RefusalDelay } from '../../src/limits/refusal-delay.js';
import { UpstreamGate } from '../../src/limits/upstream-gate.js';

describe('ClientBudget (a token bucket per client)', () => {
  it('allows the burst, then one per 1/rate seconds, and says when to retry', () => {
    const b = new ClientBudget({ ratePerSecond: 2, burst: 3, maxClients: 10 });
    for (let i = 0; i < 3; i++) expect(b.charge('a', 0)).toEqual({ ok: true });
    expect(b.charge('a', 0)).toEqual({ ok: false, retryAfterSeconds: 1 });
    expect(b.charge('a', 499)).toMatchObject({ ok: false });
    expect(b.charge('a', 500)).toEqual({ ok: true });
    // Another client has its own bucket.
    expect(b.charge('b', 500)).toEqual({ ok: true });
  });

  it('refills up to the burst, never beyond', () => {
    const b = new ClientBudget({ ratePerSecond: 1, burst: 2, maxClients: 10 });
    b.charge('a', 0);
    b.charge('a', 0);
    expect(b.charge('a', 100_000)).toEqual({ ok: true });
    expect(b.charge('a', 100_000)).toEqual({ ok: true });
    expect(b.charge('a', 100_000)).toMatchObject({ ok: false });
  });

  it('never refuses a client asking in series (none of its other uncached requests under way); it still spends what is left', () => {
    const b = new ClientBudget({ ratePerSecond: 1, burst: 2, maxClients: 10 });
    for (let i = 0; i < 100; i++) expect(b.charge('a', 0, false)).toEqual({ ok: true });
    expect(b.peek('a', 0, false)).toEqual({ ok: true });
    // The same client asking in parallel: its bucket was spent by the series.
    expect(b.peek('a', 0, true)).toMatchObject({ ok: false });
    expect(b.charge('a', 0, true)).toMatchObject({ ok: false });
    expect(b.charge('a', 1_000, true)).toEqual({ ok: true });
  });

  it('counts each client`s uncached requests under way, and forgets a client with none', () => {
    const u = new UncachedUnderWay();
    u.enter('a');
    u.enter('a');
    u.enter('b');
    expect([u.of('a'), u.of('b'), u.of('c')]).toEqual([2, 1, 0]);
    u.leave('a');
    u.leave('b');
    expect([u.of('a'), u.of('b'), u.clients]).toEqual([1, 0, 1]);
    u.leave('a');
    expect(u.clients).toBe(0);
  });

  it('a rate of 0 turns it off', () => {
    const b = new ClientBudget({ ratePerSecond: 0, burst: 1, maxClients: 10 });
    for (let i = 0; i < 100; i++) expect(b.charge('a', 0).ok).toBe(true);
    expect(b.size).toBe(0);
  });

  it('holds at most maxClients buckets, forgetting the least recently charged', () => {
    const b = new ClientBudget({ ratePerSecond: 1, burst: 1, maxClients: 2 });
    b.charge('a', 0);
    b.charge('b', 0);
    b.charge('a', 0);
    b.charge('c', 0);
    expect(b.size).toBe(2);
    // 'b' was forgotten: a full bucket again; 'a' was kept: empty.
    expect(b.charge('b', 0).ok).toBe(true);
  });
});

describe('ClientBudget.peek (asked before a miss takes a lock or leads a fetch)', () => {
  it('says what charge would say, and takes nothing', () => {
    const b = new ClientBudget({ ratePerSecond: 2, burst: 2, maxClients: 10 });
    expect(b.peek('a', 0)).toEqual({ ok: true });
    b.charge('a', 0);
    expect(b.peek('a', 0)).toEqual({ ok: true });
    expect(b.peek('a', 0)).toEqual({ ok: true });
    b.charge('a', 0);
    expect(b.peek('a', 0)).toEqual({ ok: false, retryAfterSeconds: 1 });
    // Refilled by the clock, not by peeking.
    expect(b.peek('a', 500)).toEqual({ ok: true });
    expect(b.charge('a', 500)).toEqual({ ok: true });
    expect(b.peek('a', 500)).toMatchObject({ ok: false });
  });

  it('a client never charged has its whole burst; a rate of 0 never refuses', () => {
    expect(new ClientBudget({ ratePerSecond: 1, burst: 1, maxClients: 1 }).peek('new', 0)).toEqual({ ok: true });
    const off = new ClientBudget({ ratePerSecond: 0, burst: 1, maxClients: 1 });
    off.charge('a', 0);
    expect(off.peek('a', 0)).toEqual({ ok: true });
  });
});

describe('RefusalDelay', () => {
  it('holds a refusal for its delay; past maxWaiting, refusals go at once', async () => {
    const delay = new RefusalDelay(200, 2);
    const order: string[] = [];
    const held = [delay.wait().then(() => order.push('held 1')), delay.wait().then(() => order.push('held 2'))];
    expect(delay.size).toBe(2);
    await delay.wait().then(() => order.push('at once'));
    await Promise.all(held);
    expect(order).toEqual(['at once', 'held 1', 'held 2']);
    expect(delay.size).toBe(0);
  });

  it('a delay of 0 holds nothing', async () => {
    const delay = new RefusalDelay(0, 10);
    const waiting = delay.wait();
    expect(delay.size).toBe(0);
    await waiting;
  });
});

describe('UpstreamGate', () => {
  const opts = { maxConcurrent: 2, maxQueued: 1, queueTimeoutMs: 50, perClientMax: 0 };

  it('grants up to maxConcurrent, queues up to maxQueued, refuses the rest with 503', async () => {
    const gate = new UpstreamGate(opts);
    const r1 = await gate.acquire('a');
    await gate.acquire('b');
    const waiting = gate.acquire('c');
    await expect(gate.acquire('d')).rejects.toMatchObject({ code: 'wikiedge-overloaded', status: 503 });
    expect(gate.queued).toBe(1);
    r1();
    await expect(waiting).resolves.toBeTypeOf('function');
    expect(gate.active).toBe(2);
  });

  it('take(): a free turn is given as it is, a wait or a refusal as a promise', async () => {
    const gate = new UpstreamGate(opts);
    const r1 = gate.take('a');
    expect(r1).toBeTypeOf('function');
    expect(gate.take('b')).toBeTypeOf('function');
    const waiting = gate.take('c');
    expect(waiting).toBeInstanceOf(Promise);
    await expect(gate.take('d')).rejects.toMatchObject({ code: 'wikiedge-overloaded', status: 503 });
    (r1 as () => void)();
    await expect(waiting).resolves.toBeTypeOf('function');
  });

  it('a waiter past the queue timeout is refused with Retry-After', async () => {
    const gate = new UpstreamGate(opts);
    await gate.acquire('a');
    await gate.acquire('b');
    const err = await gate.acquire('c').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(gate.queued).toBe(0);
  });

  it('a waiter whose client leaves is gone at once, and its turn is never granted', async () => {
    const gate = new UpstreamGate({ ...opts, queueTimeoutMs: 10_000 });
    const r1 = await gate.acquire('a');
    await gate.acquire('b');
    const c = new AbortController();
    const waiting = gate.acquire('c', c.signal);
    c.abort();
    await expect(waiting).rejects.toBeInstanceOf(ClientClosedError);
    expect(gate.queued).toBe(0);
    r1();
    expect(gate.active).toBe(1);
  });

  it('a client over its share gets 429, counting turns and places together', async () => {
    const refusals: string[] = [];
    const gate = new UpstreamGate({ ...opts, maxConcurrent: 1, maxQueued: 10, perClientMax: 2, queueTimeoutMs: 10_000 }, (r) => refusals.push(r));
    const r = await gate.acquire('a');
    const queued = gate.acquire('a');
    await expect(gate.acquire('a')).rejects.toMatchObject({ code: 'wikiedge-rate-limited', status: 429 });
    expect(refusals).toEqual(['client-share']);
    // Another client is not held back by a's share.
    const other = gate.acquire('b');
    r();
    (await queued)();
    (await other)();
    expect(gate.active).toBe(0);
  });

  it('refusals made at once (share, full queue) are thrown at once, counted when made, and marked to be answered after the refusal delay', async () => {
    const refusals: string[] = [];
    const gate = new UpstreamGate({ ...opts, maxConcurrent: 1, maxQueued: 0, perClientMax: 1 }, (r) => refusals.push(r));
    const r = await gate.acquire('a');
    // Thrown at once: a request refused here lets go of its lock and its coalesced fetch before
    // its answer waits (steps/error-reply.ts), so nobody waiting on it waits the delay too.
    const share = await gate.acquire('a').catch((e: unknown) => e);
    const full = await gate.acquire('b').catch((e: unknown) => e);
    expect(refusals).toEqual(['client-share', 'queue-full']);
    expect(share).toMatchObject({ code: 'wikiedge-rate-limited', answerAfterDelay: true });
    expect(full).toMatchObject({ code: 'wikiedge-overloaded', answerAfterDelay: true });
    r();
  });

  it('a refusal after waiting out the queue is not delayed again', async () => {
    const gate = new UpstreamGate({ ...opts, maxConcurrent: 1, maxQueued: 1, queueTimeoutMs: 20 });
    const r = await gate.acquire('a');
    const timedOut = await gate.acquire('b').catch((e: unknown) => e);
    expect(timedOut).toMatchObject({ code: 'wikiedge-overloaded', answerAfterDelay: false });
    r();
  });

  it('release is idempotent', async () => {
    const gate = new UpstreamGate(opts);
    const r = await gate.acquire('a');
    r();
    r();
    expect(gate.active).toBe(0);
    await sleep(1);
  });
});

describe('clientAddress (whom a request is charged to)', () => {
  const trusted = new AddressMatcher(['10.0.0.0/8', '127.0.0.1']);
  it.each([
    ['an untrusted peer is the client, whatever it forwards', '203.0.113.9', '198.51.100.1', '203.0.113.9'],
    ['a trusted peer: the rightmost untrusted hop', '10.0.0.5', '198.51.100.1, 203.0.113.7', '203.0.113.7'],
    ['trusted hops are walked past', '127.0.0.1', '198.51.100.1, 10.1.1.1', '198.51.100.1'],
    ['a trusted peer without X-Forwarded-For', '10.0.0.5', undefined, '10.0.0.5'],
    ['IPv4-mapped peers compare as IPv4', '::ffff:10.0.0.5', '198.51.100.4', '198.51.100.4'],
  ] as const)('%s', (_what, peer, xff, expected) => {
    expect(clientAddress(peer, xff, trusted)).toBe(expected);
  });
});
