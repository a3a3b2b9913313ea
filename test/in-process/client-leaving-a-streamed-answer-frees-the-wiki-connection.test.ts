// A client that leaves while the wiki's answer is still streaming to it ends the wiki's answer
// too: the gateway closes its connection to the wiki at once, rather than holding it open until
// the wiki finishes (a long parse, a large page) or until the body timeout
// (WIKIEDGE_UPSTREAM_RESPONSE_TIMEOUT_MS, 30 s by default). Before, an api.php answer too large to
// inspect was streamed through an async generator over the wiki's body, and destroying that
// stream (Fastify does when its client goes) never reached the body the generator was waiting
// on: each client that left held one of the WIKIEDGE_UPSTREAM_CONNECTIONS keep-alive connections
// for the whole timeout.
import { request } from 'node:http';
import type { ServerResponse } from 'node:http';
import { describe, expect, it, vi } from 'vitest';
import { startFakeUpstream } from '../support/fake-upstream.js';
import { startGateway } from '../support/gateway.js';

/** Sends GET `url`, waits for the headers and the first bytes of the body, then leaves. */
function readStartThenLeave(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve(res.statusCode ?? 0);
      });
    });
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    req.end();
  });
}

describe('a client that leaves a streamed answer frees its connection to the wiki', () => {
  const anonymous = {};
  const loggedIn = { cookie: 'wiki_session=abcdefabcdefabcdefabcdefabcdefab' };
  for (const [name, env, path, headers] of [
    ['a page streamed through (index.php)', {}, '/w/index.php?title=Long', anonymous],
    [
      'an api.php answer too large to inspect, streamed (debuginfo off)',
      { WIKIEDGE_DEBUGINFO: 'off', WIKIEDGE_CACHE_MAX_ENTRY_BYTES: '1000' },
      '/w/api.php?action=query&format=json&list=allpages&aplimit=max',
      anonymous,
    ],
    [
      'a logged-in api.php answer too large to inspect, streamed (debuginfo off)',
      { WIKIEDGE_DEBUGINFO: 'off', WIKIEDGE_CACHE_MAX_ENTRY_BYTES: '1000' },
      '/w/api.php?action=query&format=json&meta=userinfo&list=watchlist',
      loggedIn,
    ],
  ] as const) {
    it(`${name}: the wiki's answer is closed at once, not after the body timeout`, async () => {
      const streaming: ServerResponse[] = [];
      const fake = await startFakeUpstream((_req, res) => {
        // The start of a long answer, then nothing more for now (a slow parse, say).
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'private' });
        res.write(`{"query":{"allpages":[${'{"ns":0,"title":"A page"},'.repeat(200)}`);
        streaming.push(res);
      });
      const gw = await startGateway(fake.url, { ...env, WIKIEDGE_UPSTREAM_RESPONSE_TIMEOUT_MS: '300000' });
      try {
        const closed: Promise<void>[] = [];
        const status = await readStartThenLeave(`${gw.url}${path}`, headers);
        expect(status).toBe(200);
        expect(streaming).toHaveLength(1);
        closed.push(new Promise((resolve) => streaming[0]!.once('close', resolve)));
        // With the fix the wiki's connection closes within milliseconds; without it, only when
        // the 300 s timeout runs out. 20 s leaves a busy CI machine all the room it needs.
        await vi.waitFor(() => expect(fake.openSockets()).toBe(0), { timeout: 20_000, interval: 50 });
        await closed[0];
        // And the turn it held at the wiki is given back: the next request is answered.
        await vi.waitFor(() => expect(gw.built.gateway.underWay.of('127.0.0.1')).toBe(0), { timeout: 20_000 });
      } finally {
        for (const res of streaming) res.destroy();
        await gw.close();
        await fake.close();
      }
    });
  }
});
