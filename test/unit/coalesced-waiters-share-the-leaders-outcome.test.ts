// Identical misses in one process make one request to the wiki (cache/coalescer.ts): the waiters
// that come while a leader is on its way get what it settles with, never wait longer than their
// bound, and the key is free again the moment the leader settles.
import { describe, expect, it } from 'vitest';
import { Coalescer } from '../../src/cache/coalescer.js';

describe('Coalescer', () => {
  it('waiters that come while the leader is on its way get its outcome', async () => {
    const c = new Coalescer<string>(60_000);
    const lead = c.begin('k');
    const one = c.pending('k');
    const two = c.pending('k');
    expect(one).toBeDefined();
    lead.settle('entry');
    expect(await one).toBe('entry');
    expect(await two).toBe('entry');
  });

  it('a settled lead frees its key at once: the next request leads itself', () => {
    const c = new Coalescer<string>(60_000);
    c.begin('k').settle('entry');
    expect(c.pending('k')).toBeUndefined();
    expect(c.size).toBe(0);
  });

  it('nothing to share (undefined) reaches the waiters as undefined: they ask the wiki themselves', async () => {
    const c = new Coalescer<string>(60_000);
    const lead = c.begin('k');
    const waiter = c.pending('k');
    lead.settle(undefined);
    expect(await waiter).toBeUndefined();
  });

  it('a waiter gives up after its bound, whatever the leader does', async () => {
    const c = new Coalescer<string>(20);
    c.begin('k');
    expect(await c.pending('k')).toBeUndefined();
    expect(c.size).toBe(1);
  });

  it('a lead settled twice keeps its first outcome; a newer lead of the key is not freed by an older one', async () => {
    const c = new Coalescer<string>(60_000);
    const older = c.begin('k');
    const newer = c.begin('k');
    const waiter = c.pending('k');
    older.settle('old');
    older.settle('again');
    expect(c.size).toBe(1);
    newer.settle('new');
    expect(await waiter).toBe('new');
    expect(c.size).toBe(0);
  });

  it('lead(): the work resolves to what waiters share; a failing one shares nothing', async () => {
    const c = new Coalescer<string>(60_000);
    let finish!: (v: string) => void;
    const led = c.lead('a', () => new Promise<string>((resolve) => (finish = resolve)));
    const waiter = c.pending('a');
    finish('entry');
    expect(await led).toBe('entry');
    expect(await waiter).toBe('entry');
    const failed = c.lead('b', () => Promise.reject(new Error('the wiki failed')));
    const other = c.pending('b');
    expect(await failed).toBeUndefined();
    expect(await other).toBeUndefined();
    expect(c.size).toBe(0);
  });
});
