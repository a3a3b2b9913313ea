// MediaWiki answers a write before its post-send updates run (DerivedPageDataUpdater::doUpdates:
// doSecondaryDataUpdates with `'defer' => DeferredUpdates::POSTSEND`): Wikibase's term store is
// written after the answer, and so are the links tables and the search index. The gateway's
// invalidation of the write came first, so a search read in between (from the old terms) was kept
// for its whole TTL: `wbsearchentities` for the new label found nothing for an hour. The change's
// tags are now invalidated again WIKIEDGE_REBOUND_PURGE_MS later (src/invalidation/signals.ts
// reboundLater), as MediaWiki's own `$wgCdnReboundPurgeDelay` does. The stand-in wiki below holds
// its post-send update until the test lets it run, so the read in between is certain.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { header, http } from '../support/http.js';
import { until } from '../support/until.js';

/** A wiki of one item: its label (written with the revision) and its term store (written post-send). */
function wikiWithPostSend() {
  const state = { label: 'Berlin', terms: 'Berlin', pendingTerms: undefined as string | undefined };
  const answer = (req: IncomingMessage, res: ServerResponse): void => {
    if (req.method === 'POST') {
      req.resume();
      req.on('end', () => {
        state.label = 'Berlin (city)';
        // The term store: after the answer, once the test runs the post-send updates.
        state.pendingTerms = state.label;
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'private, must-revalidate, max-age=0' });
        res.end(JSON.stringify({ entity: { labels: { en: { language: 'en', value: state.label } }, id: 'Q1', type: 'item', lastrevid: 23 }, success: 1 }));
      });
      return;
    }
    const search = new URL(req.url ?? '/', 'http://wiki').searchParams.get('search') ?? '';
    const found = state.terms.startsWith(search) ? [{ id: 'Q1', label: state.terms }] : [];
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 's-maxage=300, max-age=300, public' });
    res.end(JSON.stringify({ searchinfo: { search }, search: found, success: 1 }));
  };
  const postSend = () => {
    if (state.pendingTerms !== undefined) state.terms = state.pendingTerms;
    state.pendingTerms = undefined;
  };
  return { answer, postSend };
}

const WRITE = 'action=wbsetlabel&id=Q1&language=en&value=Berlin%20(city)&format=json&token=%2B%5C';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

for (const { name, env, kept } of [
  { name: 'with the rebound', env: { WIKIEDGE_REBOUND_PURGE_MS: '3000' }, kept: false },
  { name: 'with WIKIEDGE_REBOUND_PURGE_MS=0', env: { WIKIEDGE_REBOUND_PURGE_MS: '0' }, kept: true },
]) {
  describe(`a search read between a label's write and the wiki's post-send update, ${name}`, () => {
    const wiki = wikiWithPostSend();
    const pair = gatewayOnFake(wiki.answer, env);

    it(kept ? 'is kept (what the rebound is for)' : 'is gone once the rebound comes', async () => {
      const search = `${pair.gw.apiUrl}?action=wbsearchentities&format=json&language=en&type=item&search=${encodeURIComponent('Berlin (city)')}`;
      const w = await http(pair.gw.apiUrl, { method: 'POST', headers: FORM, body: WRITE });
      expect(w.body).toContain('"success":1');
      // Read from the old terms, and stored: the write's own invalidation is behind it.
      const between = await http(search);
      expect(between.body).toContain('"search":[]');
      expect(header(between, 'x-cache')).toBe('miss');
      await pair.gw.built.gateway.afterAnswers.settled(5_000);
      wiki.postSend();
      if (kept) {
        expect(pair.gw.built.gateway.changes.pendingRebounds).toBe(0);
        const after = await http(search);
        expect(header(after, 'x-cache')).toBe('hit');
        expect(after.body).toContain('"search":[]');
        return;
      }
      const fresh = await until(
        () => http(search),
        (r) => r.body.includes('"id":"Q1"'),
      );
      expect(header(fresh, 'x-cache')).toBe('miss');
    });
  });
}
