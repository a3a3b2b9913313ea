// Attack: one anonymous client empties the shared tier again, past its budget of bytes stored
// (limits/client-budget.ts StoreBudget), with a made-up session cookie it lists in Connection.
// The cookie is not sent to the wiki (RFC 9110 §7.6.1: a header named in Connection is the
// hop's own; http/forwarding.ts), so the request is anonymous and its answer stored in the
// shared tier; but the store was charged to the client its raw headers name, a new session
// every request, each with a full bucket. The store is now charged to the client the gateway
// served: its address, as every anonymous client's.
import { describe, expect, it } from 'vitest';
import { answerPublic } from '../support/fake-upstream.js';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { header, http, rawTarget } from '../support/http.js';

/** 200 KB: fifteen of them are more than the 2 MiB tier below. */
const BODY = JSON.stringify({ batchcomplete: true, filler: 'x'.repeat(200_000) });

describe('attack: made-up session cookies listed in Connection evade the store budget', () => {
  const t = gatewayOnFake(answerPublic(BODY), { WIKIEDGE_CACHE_SHARED_MAX_BYTES: String(2 * 1024 * 1024) });

  const notStoredForBudget = async () => (await t.gw.built.gateway.metrics.notStored.get()).values.find((v) => v.labels.reason === 'client-budget')?.value ?? 0;

  // Each case its own victim and attacker: every address's budget is its own.
  for (const [what, headers, victimAddress, attacker] of [
    ['a session cookie', (i: number) => ({ connection: 'cookie', cookie: `wiki_session=made-up-${i}` }), '192.0.2.1', '198.51.100.7'],
    ['an Authorization header', (i: number) => ({ connection: 'authorization', authorization: `Bearer made-up-${i}` }), '192.0.2.2', '198.51.100.8'],
  ] as const) {
    it(`with ${what} the wiki never sees, a warm entry survives the flood; the flood is answered and not stored`, async () => {
      const victim = `${t.gw.apiUrl}?action=query&meta=siteinfo&format=json&victim=${what.length}`;
      const fromVictim = { headers: { 'x-forwarded-for': victimAddress } };
      expect(header(await http(victim, fromVictim), 'x-cache')).toBe('miss');
      expect(header(await http(victim, fromVictim), 'x-cache')).toBe('hit');
      const before = await notStoredForBudget();

      const xCache: (string | undefined)[] = [];
      for (let i = 0; i < 15; i++) {
        // node:http, which sends Connection as given (undici refuses any but keep-alive and close).
        const bust = await rawTarget(t.gw.url, `${new URL(t.gw.apiUrl).pathname}?action=query&list=allpages&format=json&bust=${what.length}-${i}`, {
          headers: { 'x-forwarded-for': attacker, ...headers(i) },
        });
        expect(bust.status).toBe(200);
        expect(bust.body).toBe(BODY);
        xCache.push(header(bust, 'x-cache'));
      }
      // Served as anonymous (the shared tier), answered as misses.
      expect(new Set(xCache)).toEqual(new Set(['miss']));
      expect(header(await http(victim, fromVictim), 'x-cache')).toBe('hit');
      expect((await notStoredForBudget()) - before).toBeGreaterThanOrEqual(13);
    });
  }
});
