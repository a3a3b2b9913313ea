// A client in series is never refused by the budget of uncached requests (limits/client-budget.ts).
// It was evaded (fixed in commit 0456fff): a client that closes each connection once its request is
// sent ended its requests for the count at once, while the wiki worked on (a miss's fetch goes on
// for others; PHP runs a passed request to its end): 30 of 30 such requests reached the wiki with
// a budget of 1 a second. A request now stays under way until its turn at the wiki is released
// too, and a client that leaves a request before its answer counts as asking in parallel for a
// while. And no request's count may outlive it (a waiter that left a coalesced fetch did, making
// its address "in parallel" for good).
import { connect } from 'node:net';
import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { answerPrivate, startHoldingUpstream } from '../support/fake-upstream.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startGateway } from '../support/gateway.js';

/** Send a GET on a connection of its own and close it `dropAfterMs` later, answered or not. */
function sendAndDrop(url: string, path: string, dropAfterMs: number): Promise<void> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = connect(Number(u.port), u.hostname, () => {
      s.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
      setTimeout(() => {
        s.destroy();
        resolve();
      }, dropAfterMs);
    });
    s.on('error', () => {});
  });
}

/** A wiki answering public JSON, stored and shared: a coalesced fetch's answer serves its waiters. */
function answerPublic(_req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=60, max-age=60, public' });
  res.end('{}');
}

const LIMITS = { WIKIEDGE_CLIENT_MISS_RATE: '1', WIKIEDGE_CLIENT_MISS_BURST: '1', WIKIEDGE_CLIENT_REFUSAL_DELAY_MS: '0' };

describe('a client that closes each connection once its request is sent', () => {
  for (const [name, pathOf] of [
    ['a page streamed through (index.php)', (i: number) => `/w/index.php?title=X${i}`],
    ['an api.php miss', (i: number) => `/w/api.php?action=query&format=json&bust=${randomUUID()}-${i}`],
  ] as const) {
    it(`${name}: spends its budget like any client asking in parallel`, async () => {
      const fake = await startHoldingUpstream(answerPrivate);
      const held = fake.held;
      const gw = await startGateway(fake.url, LIMITS);
      try {
        const started = Date.now();
        for (let i = 0; i < 30; i++) await sendAndDrop(gw.url, pathOf(i), 30);
        const seconds = (Date.now() - started) / 1000;
        await vi.waitFor(() => expect(gw.built.gateway.underWay.of('127.0.0.1')).toBeLessThanOrEqual(held.length));
        // The burst, what 1 a second refilled, and the first (in series until it is left).
        expect(fake.requests.length).toBeLessThanOrEqual(1 + Math.ceil(seconds) + 1);
      } finally {
        for (const h of held) h();
        await gw.close();
        await fake.close();
      }
    });
  }

  it('waiters that leave a coalesced fetch before their first look at the budget still ask as their client', async () => {
    // They went on to the wiki as nobody (the gateway's own turns: no budget, no share): 17 of 20
    // reached it at once (fixed in commit 9f51a5c).
    const fake = await startHoldingUpstream(answerPrivate);
    const held = fake.held;
    const gw = await startGateway(fake.url, { ...LIMITS, WIKIEDGE_CLIENT_MAX_CONCURRENCY: '2' });
    try {
      const path = `/w/api.php?action=query&format=json&list=allpages&k=${randomUUID()}`;
      const first = fetch(gw.url + path);
      await vi.waitFor(() => expect(held).toHaveLength(1));
      await Promise.all(Array.from({ length: 20 }, () => sendAndDrop(gw.url, path, 50)));
      await vi.waitFor(() => expect(gw.logs.filter((line) => line['status'] === 499)).toHaveLength(20));
      held[0]!(); // not stored (private): each waiter would go on to a fetch of its own
      expect((await first).status).toBe(200);
      await vi.waitFor(() => expect(gw.built.gateway.gate.queued).toBe(0));
      // The leader and at most its client's share of 2 turns: none of the 20 as nobody.
      expect(fake.requests.length).toBeLessThanOrEqual(3);
    } finally {
      for (const h of held) h();
      await gw.close();
      await fake.close();
    }
  });

  it('no count outlives its request: a waiter that left a coalesced fetch leaves its address in series', async () => {
    const fake = await startHoldingUpstream(answerPrivate, (req) => !req.url?.includes('now=1'));
    const held = fake.held;
    const gw = await startGateway(fake.url, LIMITS);
    try {
      const path = `/w/api.php?action=query&format=json&list=allpages&k=${randomUUID()}`;
      const first = fetch(gw.url + path); // leads the fetch
      await vi.waitFor(() => expect(held).toHaveLength(1));
      await sendAndDrop(gw.url, path, 50); // waits on it, then leaves
      // Its close handled (its request line written, 499) before the leader's answer comes.
      await vi.waitFor(() => expect(gw.logs.some((line) => line['status'] === 499)).toBe(true));
      held[0]!(); // not stored (private): the waiter goes on to a fetch of its own
      expect((await first).status).toBe(200);
      await vi.waitFor(
        () => {
          for (const h of held) h();
          expect(gw.built.gateway.underWay.of('127.0.0.1')).toBe(0);
        },
        { timeout: 5_000 },
      );
      expect(gw.built.gateway.underWay.clients).toBe(0);
    } finally {
      for (const h of held) h();
      await gw.close();
      await fake.close();
    }
  });

  for (const [name, answer, goesOn] of [
    ['the fetch it waited on answers it (public): it cost the wiki nothing and its client stays in series', answerPublic, false],
    ['the fetch it waited on cannot serve it (private): it goes on to ask the wiki itself, and its client counts as asking in parallel', answerPrivate, true],
  ] as const) {
    it(`a waiter that leaves a coalesced fetch: ${name}`, async () => {
      const fake = await startHoldingUpstream(answer, (req) => req.url?.includes('lead=1') ?? false);
      const held = fake.held;
      const gw = await startGateway(fake.url, LIMITS);
      try {
        const path = `/w/api.php?action=query&format=json&list=allpages&k=${randomUUID()}&lead=1`;
        const first = fetch(gw.url + path); // leads the fetch
        await vi.waitFor(() => expect(held).toHaveLength(1));
        await sendAndDrop(gw.url, path, 50); // waits on it, then leaves
        await vi.waitFor(() => expect(gw.logs.some((line) => line['status'] === 499)).toBe(true));
        held[0]!();
        expect((await first).status).toBe(200);
        // Going on, the waiter asks as its client, who left it: counted as asking in parallel
        // (its budget is spent, so it is refused rather than reaching the wiki).
        if (goesOn) await vi.waitFor(() => expect(gw.built.gateway.underWay.abandoned('127.0.0.1', Date.now())).toBe(true));
        await vi.waitFor(() => expect(gw.built.gateway.underWay.of('127.0.0.1')).toBe(0));
        expect(gw.built.gateway.underWay.abandoned('127.0.0.1', Date.now())).toBe(goesOn);
        expect(fake.requests).toHaveLength(1);
      } finally {
        for (const h of held) h();
        await gw.close();
        await fake.close();
      }
    });
  }
});
