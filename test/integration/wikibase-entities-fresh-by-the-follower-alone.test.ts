// Wikibase answers kept fresh by the recentchanges follower alone (no PURGEs: $wgCdnServers does
// not name the gateway), in front of the stand-in Wikibase, in both layouts: after entity edits
// made straight at the wiki, the answers that show them are fresh once the follower has polled
// (src/invalidation/follower.ts, src/policy/changes.ts: an entity page's row names the page and
// its entity type, so searches follow too, unless its summary says a statement module wrote it),
// and an unrelated wikitext edit leaves them hits.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { startWikibaseWiki, type WikibaseWiki, wbWrite, wikibaseLogin } from '../support/wikibase.js';
import { until } from '../support/until.js';
import { apiWrite } from '../support/wiki.js';
import { followerCaughtUp } from '../support/replicas.js';

const POLL_MS = 500;

describe.each([{ itemsInMain: false }, { itemsInMain: true }])('the follower alone, items in the main namespace: $itemsInMain', ({ itemsInMain }) => {
  let wiki: WikibaseWiki;
  let gw: RunningGateway;
  let admin: string;
  beforeAll(async () => {
    wiki = await startWikibaseWiki({ itemsInMain });
    gw = await startGateway(wiki.url, { WIKIEDGE_RC_FOLLOW: '1', WIKIEDGE_RC_POLL_MS: String(POLL_MS) });
    admin = await wikibaseLogin(wiki, 'admin');
    gw.built.learnNamespaces();
    await until(
      async () => gw.built.gateway.changes.namespaces.entities?.get('item'),
      (ns) => ns === (itemsInMain ? 0 : 120),
    );
    // The wiki's own set-up wrote rows just before the gateway started, which the follower's first
    // poll applies (its late window): on a busy machine that came between the two reads of
    // `cached` below, and evicted what the test had just cached. Once it has read past its
    // cursor (healthy), they are behind it.
    await until(
      async () => gw.built.gateway.follower?.healthy,
      (healthy) => healthy === true,
      30_000,
    );
  }, 180_000);
  afterAll(async () => {
    await gw?.close();
    await wiki?.stop();
  });

  const read = async (q: string) => http(`${gw.apiUrl}?${q}&format=json`);
  const json = async (q: string) => JSON.parse((await read(q)).body);
  const cached = async (q: string) => {
    await gw.reboundsDone();
    await read(q);
    expect(header(await read(q), 'x-cache'), q).toBe('hit');
  };

  it('a label, a statement and a search follow an edit made straight at the wiki; an unrelated edit evicts none of them', async () => {
    const entity = 'action=wbgetentities&ids=Q7&props=labels';
    const claims = 'action=wbgetclaims&entity=Q7';
    const label = `Potsdam ${Date.now()}`;
    const search = `action=wbsearchentities&search=${encodeURIComponent(label)}&language=en`;
    for (const q of [entity, claims, search]) await cached(q);

    // Until the follower has applied rows since: its events counter moved past what it was.
    const events = async () => {
      const m = await gw.built.gateway.registry.getSingleMetric('wikiedge_change_events_total')?.get();
      return (m?.values ?? []).filter((v) => v.labels['source'] === 'follower').reduce((s, v) => s + v.value, 0);
    };
    const before = await events();
    // An unrelated wikitext edit: the follower applies its row, and no Wikibase answer goes.
    const token = JSON.parse((await http(`${wiki.api}?action=query&meta=tokens&format=json`, { headers: { cookie: admin } })).body).query.tokens.csrftoken;
    await http(wiki.api, {
      method: 'POST',
      headers: { cookie: admin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ action: 'edit', title: 'Help:Follower unrelated', text: `x ${Date.now()}`, token, format: 'json' }).toString(),
    });
    await until(events, (n) => n > before);
    for (const q of [entity, claims, search]) expect(header(await read(q), 'x-cache'), `${q} after an unrelated edit`).toBe('hit');

    const started = Date.now();
    expect((await wbWrite(wiki, admin, 'wbsetlabel', { id: 'Q7', language: 'en', value: label })).json['success']).toBe(1);
    const created = await wbWrite(wiki, admin, 'wbcreateclaim', { entity: 'Q7', property: 'P4', snaktype: 'value', value: '"F"' });
    const guid = (created.json['claim'] as { id: string }).id;

    await until(
      () => json(entity),
      (a) => a.entities.Q7.labels.en.value === label,
    );
    await until(
      () => json(claims),
      (a) => JSON.stringify(a).includes(guid),
    );
    await until(
      () => json(search),
      (a) => a.search.some((s: { id: string }) => s.id === 'Q7'),
    );
    // The figure, not an assertion (timings belong to the bench): poll interval + 1 s is the target.
    console.log(`follower alone (items in main: ${itemsInMain}): fresh ${Date.now() - started} ms after the edits began (poll ${POLL_MS} ms)`);
  });

  it('a statement created straight at the wiki: wbgetclaims and lists follow, item searches stay hits (its row`s summary is a statement module`s)', async () => {
    const claims = 'action=wbgetclaims&entity=Q3';
    // Depends on any change: it goes once the follower has applied the row.
    const anyChange = 'action=query&list=recentchanges&rcprop=title&rclimit=5';
    const searches = ['action=wbsearchentities&search=Germ&language=en', 'action=query&list=wbsearch&wbssearch=Germ'];
    for (const q of [claims, ...searches]) await cached(q);
    // Any row evicts it, the previous case's last ones included if the follower applies them
    // between its two reads: cached once two reads in a row are a miss and a hit.
    await until(
      async () => {
        await read(anyChange);
        return header(await read(anyChange), 'x-cache');
      },
      (x) => x === 'hit',
    );
    const created = await wbWrite(wiki, admin, 'wbcreateclaim', { entity: 'Q3', property: 'P4', snaktype: 'value', value: `"S${Date.now()}"` });
    const guid = (created.json['claim'] as { id: string }).id;
    await until(
      () => json(claims),
      (a) => JSON.stringify(a).includes(guid),
    );
    await until(
      async () => header(await read(anyChange), 'x-cache'),
      (x) => x !== 'hit',
    );
    for (const q of searches) expect(header(await read(q), 'x-cache'), q).toBe('hit');
  });

  it('an edit of an item`s talk page straight at the wiki: the talk page`s answer follows, the item`s entity answers stay hits', async () => {
    const talk = itemsInMain ? 'Talk:Q7' : 'Item talk:Q7';
    const content = `action=query&prop=revisions&rvprop=content&rvslots=main&formatversion=2&titles=${encodeURIComponent(talk)}`;
    const text = async () => (await json(content)).query.pages[0].revisions?.[0].slots.main.content as string | undefined;
    // Its creation's row takes the item's answers (its `talkid` changed): applied before they are cached.
    await apiWrite(wiki.url, admin, { action: 'edit', title: talk, text: `created ${Date.now()}` });
    await followerCaughtUp([gw]);
    const entity = ['action=wbgetentities&ids=Q7&props=labels|claims', 'action=wbgetclaims&entity=Q7'];
    for (const q of [...entity, content]) await cached(q);
    const said = `talk ${Date.now()}`;
    await apiWrite(wiki.url, admin, { action: 'edit', title: talk, text: said });
    await until(text, (t) => t === said);
    for (const q of entity) expect(header(await read(q), 'x-cache'), `${q} after the talk page's edit`).toBe('hit');
  });
});
