// Attack: one client pushes every user's private entries out of the session tier. A request with
// any cookie the credential net takes (`wikiLoggedOut=<anything>`, `wiki_session=<random>`) is a
// session's, and its answer is stored in the session tier under that session, which the wiki
// never heard of: a made-up cookie each time made every answer a new session's entry. The session
// tier is one LRU for every session (and Redis holds its entries too), and its stores were never
// charged to anyone: a client asking in series, never refused, turned the tier over at will.
// Each client's misses now have a budget of bytes stored in the session tier too, and the sessions
// of one address share one more (limits/client-budget.ts sessionStoreBudgetOptions).
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { answerPublic } from '../support/fake-upstream.js';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { header, http } from '../support/http.js';

/** 200 KB: fifteen of them are more than the 2 MiB tier below. */
const BODY = JSON.stringify({ batchcomplete: true, filler: 'x'.repeat(200_000) });

/** A client told apart by X-Forwarded-For, from the loopback proxy the default WIKIEDGE_TRUSTED_PROXIES trusts, with `cookie`. */
const from = (address: string, cookie: string) => ({ headers: { 'x-forwarded-for': address, cookie } });

describe('attack: made-up session cookies, one per request, flush the session tier', () => {
  const t = gatewayOnFake(answerPublic(BODY), { WIKIEDGE_CACHE_SESSION_MAX_BYTES: String(2 * 1024 * 1024) });
  const notStoredForBudget = async () => (await t.gw.built.gateway.metrics.notStored.get()).values.find((v) => v.labels.reason === 'client-budget')?.value ?? 0;

  it.each([
    ['wikiLoggedOut', () => String(Date.now() + Math.random()), '192.0.2.1', 'a'],
    ['wiki_session', () => randomUUID().replace(/-/g, ''), '192.0.2.2', 'c'],
  ])('a user`s private entry survives a flood with a new %s cookie on every request; the flood is answered', async (name, value, address, id) => {
    const victim = `${t.gw.apiUrl}?action=query&meta=siteinfo&format=json&victim=${name}`;
    const session = from(address, `wiki_session=${id.repeat(32)}`);
    expect(header(await http(victim, session), 'x-cache')).toBe('miss');
    expect(header(await http(victim, session), 'x-cache')).toBe('hit');

    const before = await notStoredForBudget();
    for (let i = 0; i < 15; i++) {
      const bust = await http(
        `${t.gw.apiUrl}?action=query&list=allpages&format=json&bust=${name}${i}`,
        from(`198.51.100.${name.length}`, `${name}=${value()}`),
      );
      expect(bust.status).toBe(200);
      expect(bust.body).toBe(BODY);
      expect(header(bust, 'x-cache')).toBe('miss');
    }
    await t.gw.built.gateway.afterAnswers.settled(5_000);
    expect(header(await http(victim, session), 'x-cache')).toBe('hit');
    expect((await notStoredForBudget()) - before).toBeGreaterThanOrEqual(13);
  });

  it('another address`s sessions have their own budget: their misses are still stored', async () => {
    const q = `${t.gw.apiUrl}?action=query&list=allpages&format=json&other=1`;
    const other = from('203.0.113.9', `wiki_session=${'b'.repeat(32)}`);
    expect(header(await http(q, other), 'x-cache')).toBe('miss');
    expect(header(await http(q, other), 'x-cache')).toBe('hit');
  });
});
