// A quantity's unit (and a time's calendar model) is an entity URI: the repository's concept base
// then the id (Wikibase's SuffixEntityIdParser). Only URIs ending in `/entity/<id>` were read, as
// on Wikidata; a repository whose concept base ends otherwise (`wikibase-conceptbaseuri` in
// siteinfo, e.g. `…/wiki/Special:EntityPage/`) had wbformatvalue answers naming the unit's label
// depend on nothing, and kept for the followed TTL through the unit's label edits. (Read as an
// entity that may be a redirect, it keeps the short TTL too: formatted-entities-that-may-be-
// redirects-keep-the-short-ttl.test.ts.)
import { describe, expect, it } from 'vitest';
import { dependenciesOf } from '../../src/policy/dependencies.js';
import { modulesOf } from '../../src/policy/request.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';
import { namespacesFromSiteinfo } from '../../src/mediawiki/titles.js';

const namespaces = namespacesFromSiteinfo({
  namespaces: {
    '0': { id: 0, name: '' },
    '120': { id: 120, name: 'Item', canonical: 'Item', defaultcontentmodel: 'wikibase-item' },
    '122': { id: 122, name: 'Property', canonical: 'Property', defaultcontentmodel: 'wikibase-property' },
  },
});

const tagsOf = (unit: string) => {
  const dv = encodeURIComponent(JSON.stringify({ type: 'quantity', value: { amount: '+5', unit } }));
  const query = parsePhpQuery(`action=wbformatvalue&datavalue=${dv}&datatype=quantity&generate=text/html&format=json`);
  return dependenciesOf({ query, modules: modulesOf(query), override: undefined, answer: () => ({ result: '5 apple' }), namespaces }).tags;
};

describe('a quantity unit', () => {
  it.each([
    'https://example.org/wiki/Special:EntityPage/Q2',
    'http://www.wikidata.org/entity/Q2',
    'https://wiki.example/index.php?title=Special:EntityPage&id=Q2',
  ])('%s: the answer depends on the unit`s entity', (unit) => {
    expect(tagsOf(unit)).toEqual(expect.arrayContaining(['p:Item:Q2']));
  });

  it('a unitless quantity ("1") names no entity', () => {
    expect(tagsOf('1').some((t) => t.includes('Q'))).toBe(false);
  });
});
