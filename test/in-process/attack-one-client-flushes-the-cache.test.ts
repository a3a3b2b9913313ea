// Attack: one anonymous client empties the shared tier. The tier is an LRU (src/cache/tier.ts),
// and the budget of uncached requests never refuses a client asking in series
// (limits/client-budget.ts): such a client, sending cache-busting requests one after another for
// public answers, pushed out every entry not read meanwhile, at will. Each client's misses now
// have a budget of bytes stored (limits/client-budget.ts StoreBudget, WIKIEDGE_CLIENT_STORE_BYTES_PER_SECOND):
// past it the client is still answered, X-Cache `miss`, and nothing is stored.
import { describe, expect, it } from 'vitest';
import { answerPublic } from '../support/fake-upstream.js';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { header, http } from '../support/http.js';

/** 200 KB: fifteen of them are more than the 2 MiB tier below. */
const BODY = JSON.stringify({ batchcomplete: true, filler: 'x'.repeat(200_000) });

/** Clients told apart by X-Forwarded-For, from the loopback proxy the default WIKIEDGE_TRUSTED_PROXIES trusts. */
const from = (address: string) => ({ headers: { 'x-forwarded-for': address } });

describe('attack: one client flushes the shared tier with cache-busting requests in series', () => {
  // Default client limits; the tier small enough that the flood below would fill it over.
  const t = gatewayOnFake(answerPublic(BODY), { WIKIEDGE_CACHE_SHARED_MAX_BYTES: String(2 * 1024 * 1024) });

  const notStoredForBudget = async () => (await t.gw.built.gateway.metrics.notStored.get()).values.find((v) => v.labels.reason === 'client-budget')?.value ?? 0;

  it("a warm entry another client stored survives one client's flood; the flood is answered and not stored", async () => {
    const victim = `${t.gw.apiUrl}?action=query&meta=siteinfo&format=json&victim=1`;
    expect(header(await http(victim, from('192.0.2.1')), 'x-cache')).toBe('miss');
    expect(header(await http(victim, from('192.0.2.1')), 'x-cache')).toBe('hit');

    // One at a time: never refused by the budget of uncached requests.
    const xCache: (string | undefined)[] = [];
    for (let i = 0; i < 15; i++) {
      const bust = await http(`${t.gw.apiUrl}?action=query&list=allpages&format=json&bust=${i}`, from('198.51.100.7'));
      expect(bust.status).toBe(200);
      expect(bust.body).toBe(BODY);
      xCache.push(header(bust, 'x-cache'));
    }
    // Answered as misses, as an answer the tier would not keep is (steps/flow.ts fetchAndStore).
    expect(new Set(xCache)).toEqual(new Set(['miss']));

    expect(header(await http(victim, from('192.0.2.1')), 'x-cache')).toBe('hit');
    // Its burst took one or two; the rest were counted not stored, by their reason.
    expect(await notStoredForBudget()).toBeGreaterThanOrEqual(13);
  });

  it("the flooding client's budget is its own: another client's misses are still stored", async () => {
    const other = `${t.gw.apiUrl}?action=query&list=allpages&format=json&other=1`;
    expect(header(await http(other, from('203.0.113.9')), 'x-cache')).toBe('miss');
    expect(header(await http(other, from('203.0.113.9')), 'x-cache')).toBe('hit');
  });
});
