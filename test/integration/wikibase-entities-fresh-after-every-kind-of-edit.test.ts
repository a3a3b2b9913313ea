// Wikibase answers through the gateway, in front of the stand-in Wikibase (test/wiki-extension/
// WikiedgeWikibase), in both layouts a repository may have (items in Item:, items in the main
// namespace as on Wikidata): after each kind of entity edit, every cached answer that shows the
// change is fresh on the first read (the wiki's PURGEs, or a write through the gateway), and
// what does not depend on the change stays a hit (src/mediawiki/modules.ts,
// src/policy/dependencies.ts, src/policy/changes.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { apiWrite, setWikiToggle } from '../support/wiki.js';
import { itemTitle, startWikibaseWiki, type WikibaseWiki, wbWrite, wikibaseLogin } from '../support/wikibase.js';
import { until } from '../support/until.js';

const datavalue = (id: string) =>
  encodeURIComponent(JSON.stringify({ value: { 'entity-type': 'item', 'numeric-id': Number(id.slice(1)), id }, type: 'wikibase-entityid' }));

describe.each([{ itemsInMain: false }, { itemsInMain: true }])('Wikibase entities with items in the main namespace: $itemsInMain', ({ itemsInMain }) => {
  let wiki: WikibaseWiki;
  let gw: RunningGateway;
  let admin: string;
  beforeAll(async () => {
    wiki = await startWikibaseWiki({ itemsInMain, cdn: '127.0.0.1:9' });
    // The short TTL (searches, formatted values that may be redirects: src/policy/dependencies.ts)
    // outlasts the file: a loaded machine took 55 s over the 100 edits below, and entries that
    // ended by their TTL were not what the test asks about.
    gw = await startGateway(wiki.url, { WIKIEDGE_TTL_PUBLIC_SECONDS: '900' });
    await setWikiToggle(wiki.data, { cdn: [`127.0.0.1:${new URL(gw.url).port}`] });
    admin = await wikibaseLogin(wiki, 'admin');
    // The gateway learns the wiki's entity namespaces once it serves (src/upstream/site-namespaces.ts).
    gw.built.learnNamespaces();
    await until(
      async () => gw.built.gateway.changes.namespaces.entities?.get('item'),
      (ns) => ns === (itemsInMain ? 0 : 120),
    );
  }, 180_000);
  afterAll(async () => {
    await gw?.close();
    await wiki?.stop();
  });

  const api = (q: string) => `${gw.apiUrl}?${q}&format=json`;
  const read = async (q: string) => http(api(q));
  const json = async (q: string) => JSON.parse((await read(q)).body);
  const cached = async (q: string) => {
    await gw.reboundsDone();
    await read(q);
    const again = await read(q);
    expect(header(again, 'x-cache'), q).toBe('hit');
    return JSON.parse(again.body);
  };
  const isHit = async (q: string) => header(await read(q), 'x-cache') === 'hit';
  // An answer cached within WIKIEDGE_REBOUND_PURGE_MS of a change to what it reads is fetched
  // once more when the change's rebound comes (src/invalidation/signals.ts reboundLater): a test
  // asking whether a later, unrelated change leaves entries hits caches them after the earlier
  // changes' rebounds are done (cached() waits for them; support/gateway.ts reboundsDone).
  const through = {
    get wiki() {
      return { ...wiki, api: gw.apiUrl };
    },
  };

  it('a label set straight at the wiki: the entity, its formatted forms and the search for the new label are fresh; other entities stay hits', async () => {
    const label = `Berlin ${Date.now()}`;
    await cached('action=wbgetentities&ids=Q1&props=labels');
    await cached('action=wbformatentities&ids=Q1|P2');
    await cached(`action=wbsearchentities&search=${encodeURIComponent(label)}&language=en`);
    await cached('action=wbgetentities&ids=Q3&props=labels');
    await cached('action=wbparsevalue&datatype=time&values=1237');
    await cached('action=query&meta=wbcontentlanguages&wbclprop=code');

    const res = await wbWrite(wiki, admin, 'wbsetlabel', { id: 'Q1', language: 'en', value: label });
    expect(res.json['success']).toBe(1);

    expect((await json('action=wbgetentities&ids=Q1&props=labels')).entities.Q1.labels.en.value).toBe(label);
    expect(JSON.stringify(await json('action=wbformatentities&ids=Q1|P2'))).toContain(label);
    expect((await json(`action=wbsearchentities&search=${encodeURIComponent(label)}&language=en`)).search.map((s: { id: string }) => s.id)).toContain('Q1');
    expect(await isHit('action=wbgetentities&ids=Q3&props=labels')).toBe(true);
    expect(await isHit('action=wbparsevalue&datatype=time&values=1237')).toBe(true);
    expect(await isHit('action=query&meta=wbcontentlanguages&wbclprop=code')).toBe(true);
  });

  it('a statement value set through the gateway: wbgetclaims and wbgetentities props=claims are fresh for everyone', async () => {
    const claims = await cached('action=wbgetclaims&entity=Q3');
    await cached('action=wbgetentities&ids=Q3&props=claims');
    const statement = (Object.values(claims.claims).flat() as { id: string; mainsnak: { datavalue?: { type: string } } }[]).find(
      (c) => c.mainsnak.datavalue?.type === 'quantity',
    )!;
    const amount = `+${1000 + (Date.now() % 100000)}`;
    const res = await wbWrite(through.wiki, admin, 'wbsetclaimvalue', {
      claim: statement.id,
      snaktype: 'value',
      value: JSON.stringify({ amount, unit: '1' }),
    });
    expect(res.json['success']).toBe(1);
    expect(JSON.stringify(await json('action=wbgetclaims&entity=Q3'))).toContain(amount);
    expect(JSON.stringify(await json('action=wbgetentities&ids=Q3&props=claims'))).toContain(amount);
  });

  it('a statement created and removed straight at the wiki: wbgetclaims fresh each time', async () => {
    await cached('action=wbgetclaims&entity=Q7');
    const created = await wbWrite(wiki, admin, 'wbcreateclaim', { entity: 'Q7', property: 'P4', snaktype: 'value', value: '"POT"' });
    expect(created.json['success']).toBe(1);
    const guid = (created.json['claim'] as { id: string }).id;
    expect(JSON.stringify(await json('action=wbgetclaims&entity=Q7'))).toContain(guid);
    const removed = await wbWrite(wiki, admin, 'wbremoveclaims', { claim: guid });
    expect(removed.json['success']).toBe(1);
    expect(JSON.stringify(await json('action=wbgetclaims&entity=Q7'))).not.toContain(guid);
  });

  it('a statement created straight at the wiki, then another: wbgetclaims and lists fresh each time, item searches stay hits after the second', async () => {
    const claims = 'action=wbgetclaims&entity=Q3';
    // Depends on any change: it goes once the wiki has confirmed the PURGE's change.
    const anyChange = 'action=query&list=recentchanges&rcprop=title&rclimit=5';
    const searches = ['action=wbsearchentities&search=Germ&language=en', 'action=query&list=wbsearch&wbssearch=Germ'];
    // The first: the gateway may never have asked about the page, and then the searches stay only
    // if the revision before it is older than the confirmation window (src/invalidation/
    // purge-confirmation.ts onlyStatementsSince), which a fresh seed's is not. The second: the
    // revision before it is the one the gateway confirmed for the first.
    for (const i of [0, 1]) {
      for (const q of [claims, anyChange, ...searches]) await cached(q);
      const created = await wbWrite(wiki, admin, 'wbcreateclaim', { entity: 'Q3', property: 'P4', snaktype: 'value', value: `"S${i}${Date.now()}"` });
      const guid = (created.json['claim'] as { id: string }).id;
      expect(JSON.stringify(await json(claims))).toContain(guid);
      await until(
        async () => header(await read(anyChange), 'x-cache'),
        (x) => x !== 'hit',
      );
      if (i === 1) for (const q of searches) expect(header(await read(q), 'x-cache'), q).toBe('hit');
    }
  });

  it('the label of an item a value points to: wbformatvalue of that value is fresh', async () => {
    const q = `action=wbformatvalue&datavalue=${datavalue('Q2')}&generate=text/plain`;
    await cached(q);
    const label = `city ${Date.now()}`;
    expect((await wbWrite(wiki, admin, 'wbsetlabel', { id: 'Q2', language: 'en', value: label })).json['success']).toBe(1);
    expect((await json(q)).result).toBe(label);
  });

  it('a merge, then an edit of the target: the redirected id answers fresh each time, whatever props', async () => {
    await cached('action=wbgetentities&ids=Q6&props=labels');
    const merged = await wbWrite(wiki, admin, 'wbmergeitems', { fromid: 'Q6', toid: 'Q1', ignoreconflicts: 'description' });
    expect(merged.json['success']).toBe(1);
    const after = await json('action=wbgetentities&ids=Q6&props=labels');
    expect(after.entities.Q6.redirects).toEqual({ from: 'Q6', to: 'Q1' });
    await cached('action=wbgetentities&ids=Q6&props=labels');
    const label = `Berlin merged ${Date.now()}`;
    expect((await wbWrite(wiki, admin, 'wbsetlabel', { id: 'Q1', language: 'en', value: label })).json['success']).toBe(1);
    expect((await json('action=wbgetentities&ids=Q6&props=labels')).entities.Q6.labels.en.value).toBe(label);
  });

  it('a redirect created straight at the wiki (wbcreateredirect): the redirected id answers with its target at once', async () => {
    const created = await wbWrite(wiki, admin, 'wbeditentity', { new: 'item', data: '{}' });
    const id = (created.json['entity'] as { id: string }).id;
    expect((await cached(`action=wbgetentities&ids=${id}&props=labels`)).entities[id].redirects).toBeUndefined();
    const redirected = await wbWrite(wiki, admin, 'wbcreateredirect', { from: id, to: 'Q3' });
    expect(redirected.json['success']).toBe(1);
    expect((await json(`action=wbgetentities&ids=${id}&props=labels`)).entities[id].redirects).toEqual({ from: id, to: 'Q3' });
  });

  it('a deletion straight at the wiki: the entity reads as missing at once', async () => {
    const created = await wbWrite(wiki, admin, 'wbeditentity', { new: 'item', data: JSON.stringify({ labels: { en: { language: 'en', value: 'doomed' } } }) });
    const id = (created.json['entity'] as { id: string }).id;
    expect((await cached(`action=wbgetentities&ids=${id}&props=labels`)).entities[id].missing).toBeUndefined();
    const token = JSON.parse((await http(`${wiki.api}?action=query&meta=tokens&format=json`, { headers: { cookie: admin } })).body).query.tokens.csrftoken;
    await http(wiki.api, {
      method: 'POST',
      headers: { cookie: admin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ action: 'delete', title: itemTitle(wiki, id), token, format: 'json' }).toString(),
    });
    expect((await json(`action=wbgetentities&ids=${id}&props=labels`)).entities[id].missing).toBe('');
  });

  it('a redirect whose target was deleted reads as missing; the target undeleted, it reads as the target at once', async () => {
    // Wikibase answers such a redirect as missing, naming no target (GetEntities::getEntityRevision);
    // the undeletion names only the target (src/policy/dependencies.ts, a-missing-entity-may-be-a-broken-redirect.test.ts).
    const target = await wbWrite(wiki, admin, 'wbeditentity', { new: 'item', data: JSON.stringify({ labels: { en: { language: 'en', value: 'target' } } }) });
    const targetId = (target.json['entity'] as { id: string }).id;
    const source = await wbWrite(wiki, admin, 'wbeditentity', { new: 'item', data: '{}' });
    const id = (source.json['entity'] as { id: string }).id;
    expect((await wbWrite(wiki, admin, 'wbcreateredirect', { from: id, to: targetId })).json['success']).toBe(1);
    const token = JSON.parse((await http(`${wiki.api}?action=query&meta=tokens&format=json`, { headers: { cookie: admin } })).body).query.tokens.csrftoken;
    const admin_ = (action: string) =>
      http(wiki.api, {
        method: 'POST',
        headers: { cookie: admin, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ action, title: itemTitle(wiki, targetId), token, format: 'json' }).toString(),
      });
    await admin_('delete');
    expect((await cached(`action=wbgetentities&ids=${id}&props=labels`)).entities[id].missing).toBe('');
    await admin_('undelete');
    const back = await json(`action=wbgetentities&ids=${id}&props=labels`);
    expect(back.entities[id].redirects).toEqual({ from: id, to: targetId });
    expect(back.entities[id].labels.en.value).toBe('target');
  });

  it('edits of an item`s talk page, straight at the wiki and through the gateway, leave its entity answers hits; the talk page`s own answer is fresh', async () => {
    // Wikidata's layout puts an item's talk page in Talk:, a repository with Item: in Item talk:.
    const talk = wiki.itemsInMain ? 'Talk:Q3' : 'Item talk:Q3';
    const content = `action=query&prop=revisions&rvprop=content&rvslots=main&formatversion=2&titles=${encodeURIComponent(talk)}`;
    const text = async () => (await json(content)).query.pages[0].revisions?.[0].slots.main.content as string | undefined;
    // Its creation purges the item's URLs too (WikiPage::onArticleCreate): done before the answers are cached.
    await apiWrite(wiki.url, admin, { action: 'edit', title: talk, text: `created ${Date.now()}` });
    const entity = [
      'action=wbgetentities&ids=Q3&props=labels|claims',
      'action=wbgetclaims&entity=Q3',
      `action=query&prop=entityterms&titles=${encodeURIComponent(itemTitle(wiki, 'Q3'))}`,
    ];
    for (const [i, base] of [wiki.url, gw.url].entries()) {
      for (const q of [...entity, content]) await cached(q);
      const said = `talk ${i} ${Date.now()}`;
      await apiWrite(base, admin, { action: 'edit', title: talk, text: said });
      expect(await text(), base === gw.url ? 'through the gateway' : 'straight at the wiki').toBe(said);
      for (const q of entity) expect(await isHit(q), `${q} after the talk page's edit`).toBe(true);
    }
  });

  it('100 wikitext edits of unrelated pages (Help:, since the main namespace may hold items) and an anonymous action=purge leave the Wikibase entries hits', async () => {
    const queries = [
      'action=wbgetentities&ids=Q3&props=labels',
      'action=wbgetentities&ids=Q7|P1',
      'action=wbgetclaims&entity=Q3',
      `action=wbformatvalue&datavalue=${datavalue('Q3')}&generate=text/plain`,
      'action=wbformatentities&ids=Q3|P4',
      'action=wbsearchentities&search=Pots&language=en',
      'action=wbsearchentities&search=pop&type=property&language=en',
      'action=query&list=wbsearch&wbssearch=Germ',
      `action=query&prop=entityterms&titles=${encodeURIComponent(itemTitle(wiki, 'Q3'))}`,
      'action=wbparsevalue&datatype=time&values=1237',
      'action=query&meta=wbcontentlanguages&wbclprop=code',
      'action=wbavailablebadges',
    ];
    for (const q of queries) await cached(q);
    const token = JSON.parse((await http(`${wiki.api}?action=query&meta=tokens&format=json`, { headers: { cookie: admin } })).body).query.tokens.csrftoken;
    for (let i = 0; i < 100; i++) {
      const res = await http(wiki.api, {
        method: 'POST',
        headers: { cookie: admin, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ action: 'edit', title: `Help:Unrelated page ${i}`, text: `text ${Date.now()}`, token, format: 'json' }).toString(),
      });
      expect(JSON.parse(res.body).edit.result).toBe('Success');
    }
    // Anyone may make the wiki send a PURGE of a page (ApiPurge needs no token).
    const purge = await http(wiki.api, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ action: 'purge', titles: 'Help:Unrelated page 0', format: 'json' }).toString(),
    });
    expect(purge.status).toBe(200);
    let hits = 0;
    for (const q of queries) if (await isHit(q)) hits++;
    expect(hits, `${hits} of ${queries.length} Wikibase entries still hits`).toBe(queries.length);
  });
});
