// wbformatvalue of an item value Q6, or wbformatentities&ids=Q6, where Q6 redirects to Q1 since a
// merge: Wikibase's formatters read labels through a lookup that follows redirects
// (CachingFallbackLabelDescriptionLookup::getTerm → lookupLatestRevisionResolvingRedirect), so the
// answer prints Q1's label. Neither the request nor the answer names Q1 (the link is to Item:Q6,
// the id's own title: EntityIdHtmlLinkFormatter), and Q1's label change names Item:Q1 alone
// (recentchanges row, PURGE, write). Only MediaWiki's job for the pages redirecting to an edited
// page (HTMLCacheUpdateJob `table=redirect`, queued by every edit of Item:Q1, as the reference
// capture of a merge shows) PURGEs Item:Q6 afterwards: a job's signal, as for the links tables. So
// such an answer keeps the short TTL defaults, as the links tables' do, while still depending on
// the pages it names, and never on every item change; a property cannot be a redirect (its content
// has no redirect form), so formatting properties alone keeps the long ones
// (src/mediawiki/modules.ts, src/mediawiki/entities.ts mayBeRedirect).
import { describe, expect, it } from 'vitest';
import { modulesOf } from '../../src/policy/request.js';
import { changesAreSignalled, dependenciesOf } from '../../src/policy/dependencies.js';
import { changeFromPurge } from '../../src/policy/changes.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';

function of(q: string, answer: unknown) {
  const query = parsePhpQuery(`${q}&format=json`);
  const modules = modulesOf(query);
  return { tags: dependenciesOf({ query, modules, override: undefined, answer: () => answer }).tags, followed: changesAreSignalled(modules, query) };
}
const dv = (value: unknown) => encodeURIComponent(JSON.stringify(value));
const item = (id: string) => dv({ type: 'wikibase-entityid', value: { 'entity-type': 'item', id } });

describe('formatted entities that may be redirects', () => {
  it.each([['text/plain'], ['text/x-wiki'], ['text/html']])('wbformatvalue of an item (generate=%s): the short TTL, its page still depended on', (generate) => {
    const { tags, followed } = of(`action=wbformatvalue&datatype=wikibase-item&datavalue=${item('Q6')}&generate=${encodeURIComponent(generate)}`, {
      result: 'Berlin',
    });
    expect(followed).toBe(false);
    expect(tags).toContain('p:Item:Q6');
    expect(tags).not.toContain('*');
    // MediaWiki's PURGE of the redirect's page, after the job for pages redirecting to Item:Q1.
    expect(tags.some((t) => changeFromPurge('Item:Q6').tags.includes(t))).toBe(true);
  });

  it('wbformatentities of an item, and a quantity whose unit is an item: the short TTL', () => {
    expect(of('action=wbformatentities&ids=Q6', { wbformatentities: { Q6: '<a title="Item:Q6" href="/wiki/Item:Q6">Berlin</a>' } }).followed).toBe(false);
    const quantity = dv({ type: 'quantity', value: { amount: '+5', unit: 'http://www.wikidata.org/entity/Q11573' } });
    expect(of(`action=wbformatvalue&datavalue=${quantity}&property=P2`, { result: '5 metre' }).followed).toBe(false);
  });

  it('properties alone, and values naming no entity, keep the long TTL defaults', () => {
    expect(of('action=wbformatentities&ids=P1|P2', { wbformatentities: { P1: 'a', P2: 'b' } }).followed).toBe(true);
    expect(of(`action=wbformatvalue&datavalue=${dv({ type: 'string', value: 'DE' })}&property=P4`, { result: 'DE' }).followed).toBe(true);
    expect(of(`action=wbformatvalue&datavalue=${dv({ type: 'string', value: 'x' })}`, { result: 'x' })).toEqual({ tags: [], followed: true });
    const property = dv({ type: 'wikibase-entityid', value: { 'entity-type': 'property', id: 'P31' } });
    expect(of(`action=wbformatvalue&datatype=wikibase-property&datavalue=${property}`, { result: 'instance of' }).followed).toBe(true);
  });

  it('a time`s calendar model is printed as it is, not as an entity: no dependency, the long TTL; a globe, whose label a diff prints, is read for a diff alone', () => {
    // The values of capture 04 (Wikidata's URIs on every wiki).
    const time = dv({
      type: 'time',
      value: { time: '+1237-00-00T00:00:00Z', timezone: 0, before: 0, after: 0, precision: 9, calendarmodel: 'http://www.wikidata.org/entity/Q1985727' },
    });
    // (The MediaWiki namespace: a time's month names and precisions are messages, modules.ts ModuleFacts.messages.)
    expect(of(`action=wbformatvalue&datavalue=${time}&property=P3`, { result: '1237' })).toEqual({ tags: ['p:Property:P3', 'p:P3', 'n:8'], followed: true });
    const coordinate = dv({
      type: 'globecoordinate',
      value: { latitude: 52.5, longitude: 13.4, altitude: null, precision: 0.0166, globe: 'http://www.wikidata.org/entity/Q2' },
    });
    // Plain text, wikitext and HTML print the latitude and longitude alone (GlobeCoordinateFormatter).
    for (const generate of ['', '&generate=text/plain', '&generate=text/html', '&generate=text/x-wiki']) {
      const plain = of(`action=wbformatvalue&datavalue=${coordinate}&property=P5${generate}`, { result: "52°30'N" });
      expect(plain.tags, generate).not.toContain('p:Q2');
      expect(plain.followed, generate).toBe(true);
    }
    // A diff prints the globe's label (GlobeCoordinateDetailsFormatter).
    const diff = of(`action=wbformatvalue&datavalue=${coordinate}&property=P5&generate=${encodeURIComponent('text/html; disposition=diff')}`, { result: '…' });
    expect(diff.tags).toContain('p:Q2');
    expect(diff.followed).toBe(false);
  });
});
