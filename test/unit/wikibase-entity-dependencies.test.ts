// What Wikibase answers depend on (src/policy/dependencies.ts over the module table,
// src/mediawiki/modules.ts) and what Wikibase changes name (src/policy/changes.ts), for both
// layouts a repository may have: items in Item: (namespace 120) and items in the main namespace.
import { describe, expect, it } from 'vitest';
import { modulesOf } from '../../src/policy/request.js';
import { dependenciesOf } from '../../src/policy/dependencies.js';
import { changeFromRow, changeFromWrite, changeConfirmed, changeFromPurge } from '../../src/policy/changes.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';
import { namespacesFromSiteinfo } from '../../src/mediawiki/titles.js';

const siteinfo = (itemNs: number) =>
  namespacesFromSiteinfo({
    namespaces: {
      '0': { id: 0, name: '', ...(itemNs === 0 && { defaultcontentmodel: 'wikibase-item' }) },
      '1': { id: 1, name: 'Talk', canonical: 'Talk' },
      '120': { id: 120, name: 'Item', canonical: 'Item', ...(itemNs === 120 && { defaultcontentmodel: 'wikibase-item' }) },
      '121': { id: 121, name: 'Item talk', canonical: 'Item talk' },
      '122': { id: 122, name: 'Property', canonical: 'Property', defaultcontentmodel: 'wikibase-property' },
      '123': { id: 123, name: 'Property talk', canonical: 'Property talk' },
    },
  });

const LAYOUTS = [
  { name: 'items in Item:', ns: siteinfo(120), page: (id: string) => (id.startsWith('Q') ? `Item:${id}` : `Property:${id}`) },
  { name: 'items in the main namespace', ns: siteinfo(0), page: (id: string) => (id.startsWith('Q') ? id : `Property:${id}`) },
];

function deps(q: string, answer: unknown, namespaces: ReturnType<typeof siteinfo>) {
  const query = parsePhpQuery(q);
  return dependenciesOf({ query, modules: modulesOf(query), override: undefined, answer: () => answer, namespaces }).tags;
}

describe.each(LAYOUTS)('with $name', ({ ns, page }) => {
  const p = (id: string) => `p:${page(id)}`;

  it('wbgetentities of a redirected id depends on the redirect and on its target, whatever props', () => {
    const answer = { entities: { Q6: { type: 'item', id: 'Q1', redirects: { from: 'Q6', to: 'Q1' }, labels: {} } }, success: 1 };
    const tags = deps('action=wbgetentities&ids=Q6&props=labels&format=json', answer, ns);
    expect(tags).toContain(p('Q6'));
    expect(tags).toContain(p('Q1'));
    expect(tags).not.toContain('*');
  });
  it('wbgetentities of several ids, a property missing: each entity`s page, no list (a missing item: a-missing-entity-may-be-a-broken-redirect.test.ts)', () => {
    const answer = { entities: { Q1: { id: 'Q1', type: 'item' }, P2: { id: 'P2', type: 'property' }, P999: { id: 'P999', missing: '' } }, success: 1 };
    const tags = deps('action=wbgetentities&ids=Q1|P2|p999&format=json', answer, ns);
    expect(tags.toSorted()).toEqual([p('P2'), p('Q1'), p('P999')].toSorted());
  });
  it('wbgetentities by site and title that found nothing: any item`s sitelinks changing, and the local page by that title (MediaInfo finds a file by its page)', () => {
    const answer = { entities: { '-1': { site: 'enwiki', title: 'Berlin', missing: '' } }, success: 1 };
    expect(deps('action=wbgetentities&sites=enwiki&titles=Berlin&format=json', answer, ns)).toEqual(['sl', 'p:Berlin']);
    const file = { entities: { '-1': { site: 'commonswiki', title: 'File:New.jpg', missing: '' } }, success: 1 };
    expect(deps('action=wbgetentities&sites=commonswiki&titles=File:New.jpg&format=json', file, ns)).toEqual(['sl', 'p:File:New.jpg']);
  });
  it('wbgetclaims: the entity, named by entity= or by a claim GUID`s prefix (any case)', () => {
    expect(deps('action=wbgetclaims&entity=Q1&property=P2&format=json', { claims: {} }, ns)).toEqual([p('Q1')]);
    // With a claim shown: its snaks' datatypes too (a-property-deletion-ends-the-datatypes-entity-answers-show.test.ts).
    expect(deps('action=wbgetclaims&claim=q1$5627-ab&format=json', { claims: { P2: [{ id: 'Q1$5627-ab' }] } }, ns)).toEqual([p('Q1'), 'dt']);
  });
  it('wbformatvalue: the entities the datavalue references, the unit`s entity and the property, and the messages of an entity gone', () => {
    const item = encodeURIComponent(JSON.stringify({ value: { 'entity-type': 'item', 'numeric-id': 2, id: 'Q2' }, type: 'wikibase-entityid' }));
    // An entity gone prints `wikibase-deletedentity-*` (EntityIdHtmlLinkFormatter::getHtmlForNonExistent): the MediaWiki namespace too.
    expect(deps(`action=wbformatvalue&datavalue=${item}&generate=text/html&format=json`, { result: 'city' }, ns).toSorted()).toEqual(
      [p('Q2'), 'n:8'].toSorted(),
    );
    const quantity = encodeURIComponent(JSON.stringify({ value: { amount: '+5', unit: 'http://www.wikidata.org/entity/Q11573' }, type: 'quantity' }));
    expect(deps(`action=wbformatvalue&datavalue=${quantity}&property=P2&format=json`, { result: '5 metre' }, ns).toSorted()).toEqual(
      [p('P2'), p('Q11573'), 'n:8'].toSorted(),
    );
  });
  it('wbformatvalue of a time: the MediaWiki namespace, whose pages may override its month names and precisions', () => {
    const t = encodeURIComponent(
      JSON.stringify({ value: { time: '+2020-05-01T00:00:00Z', precision: 11, calendarmodel: 'http://www.wikidata.org/entity/Q1985727' }, type: 'time' }),
    );
    expect(deps(`action=wbformatvalue&datavalue=${t}&format=json`, { result: '1 May 2020' }, ns)).toEqual(['n:8']);
  });
  it('wbformatvalue of a plain string depends on nothing but its TTL', () => {
    const s = encodeURIComponent(JSON.stringify({ value: 'x', type: 'string' }));
    expect(deps(`action=wbformatvalue&datavalue=${s}&format=json`, { result: 'x' }, ns)).toEqual([]);
  });
  it('wbformatentities: every id, and the messages it prints for an entity that is gone', () => {
    expect(deps('action=wbformatentities&ids=Q1|P2&format=json', { wbformatentities: { Q1: 'Berlin', P2: 'population' } }, ns).toSorted()).toEqual(
      [p('P2'), p('Q1'), 'n:8'].toSorted(),
    );
  });
  it('searches depend on their entity type`s terms, never on wikitext edits', () => {
    expect(deps('action=wbsearchentities&search=Ber&language=en&format=json', { search: [] }, ns)).toEqual(['t:item']);
    expect(deps('action=wbsearchentities&search=Ein&type=property&language=de&format=json', { search: [] }, ns)).toEqual(['t:property']);
    expect(deps('action=query&list=wbsearch&wbssearch=Ber&format=json', { query: { wbsearch: [] } }, ns)).toEqual(['t:item']);
  });
  it('prop=entityterms depends on its pages', () => {
    const answer = { query: { pages: { '11': { pageid: 11, ns: 120, title: 'Item:Q1', entityterms: {} } } } };
    expect(deps('action=query&prop=entityterms&titles=Item:Q1&format=json', answer, ns)).not.toContain('*');
  });
  it('wbparsevalue, wbcontentlanguages, wbavailablebadges: the TTL alone; a time parser the month names too', () => {
    expect(deps('action=wbparsevalue&datatype=string&values=1237&format=json', {}, ns)).toEqual([]);
    expect(deps('action=wbparsevalue&datatype=time&values=1237&format=json', {}, ns)).toEqual(['n:8']);
    expect(deps('action=wbparsevalue&parser=time&values=1237&format=json', {}, ns)).toEqual(['n:8']);
    expect(deps('action=query&meta=wbcontentlanguages&format=json', {}, ns)).toEqual([]);
    expect(deps('action=wbavailablebadges&format=json', {}, ns)).toEqual([]);
  });

  describe('writes name their entities', () => {
    const write = (action: string, params: Record<string, string>, answer: unknown) => changeFromWrite(action, (n) => params[n], ns, answer)!.tags;
    it('wbsetclaimvalue: the claim GUID`s entity, from the request and the answer; its type`s searches once the wiki confirms it changed', () => {
      const c = changeFromWrite('wbsetclaimvalue', (n) => ({ claim: 'Q1$0E94672F-0999' })[n], ns, {
        pageinfo: { lastrevid: 26 },
        success: 1,
        claim: { id: 'Q1$0E94672F-0999' },
      })!;
      expect(c.tags).toEqual([p('Q1')]);
      expect(c.confirm).toEqual([page('Q1')]);
      expect(changeConfirmed(page('Q1'), ns).tags).toContain('t:item');
    });
    it('wbremoveclaims: the entities of every removed claim', () => {
      expect(write('wbremoveclaims', { claim: 'Q3$a|Q3$b' }, { success: 1, claims: ['Q3$a', 'Q3$b'] })).toContain(p('Q3'));
    });
    it('wbmergeitems: both items; wbcreateredirect: both', () => {
      const merge = write('wbmergeitems', { fromid: 'Q6', toid: 'Q1' }, { success: 1, from: { id: 'Q6' }, to: { id: 'Q1' } });
      expect(merge).toEqual(expect.arrayContaining([p('Q6'), p('Q1')]));
      const redirect = write('wbcreateredirect', { from: 'Q6', to: 'Q1' }, { success: 1, redirected: 1 });
      expect(redirect).toEqual(expect.arrayContaining([p('Q6'), p('Q1')]));
    });
    it('wbeditentity new=item: the new entity the answer names', () => {
      expect(write('wbeditentity', { new: 'item' }, { success: 1, entity: { id: 'Q9', type: 'item' } })).toContain(p('Q9'));
    });
    it('a write that names no entity: every entity type`s searches, and any list', () => {
      const tags = write('wbsetlabel', {}, { success: 1 });
      expect(tags).toEqual(expect.arrayContaining(['*', 't:item', 't:property']));
    });
    it('an unconfirmed write (no success) invalidates nothing', () => {
      expect(changeFromWrite('wbsetlabel', () => 'Q1', ns, { error: { code: 'badtoken' } })).toBeUndefined();
    });
  });

  it('a recentchanges row of an entity page names the page and the entity type; a wikitext page does not', () => {
    const item = changeFromRow(
      { type: 'edit', ns: page('Q1').startsWith('Item:') ? 120 : 0, title: page('Q1'), rcid: 1, timestamp: '2026-11-28T00:00:00Z' },
      ns,
    );
    expect(item.tags).toEqual(expect.arrayContaining([p('Q1'), 't:item']));
    const text = changeFromRow({ type: 'edit', ns: 0, title: 'Berlin', rcid: 2, timestamp: '2026-11-28T00:00:00Z' }, ns);
    expect(text.tags).not.toContain('t:item');
  });
  it('a PURGE of an entity page names its page only; confirmed, its type too', () => {
    expect(changeFromPurge(page('Q1'), ns).tags).not.toContain('t:item');
    expect(changeConfirmed(page('Q1'), ns).tags).toContain('t:item');
  });
});

describe('before the wiki`s layout is learned', () => {
  it('an id stands for both pages (over-invalidates, never under)', () => {
    const query = parsePhpQuery('action=wbgetentities&ids=Q1&format=json');
    const tags = dependenciesOf({ query, modules: modulesOf(query), override: undefined, answer: () => ({ entities: { Q1: { id: 'Q1' } } }) }).tags;
    expect(tags).toEqual(expect.arrayContaining(['p:Item:Q1', 'p:Q1']));
  });
});
