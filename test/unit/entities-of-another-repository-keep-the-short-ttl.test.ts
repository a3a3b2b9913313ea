// A repository whose entities are another's (a Commons-like wiki of MediaInfo, whose statements
// name Wikidata's properties and items by plain id; a repository reading its properties from
// another source) formats and validates ids it keeps no pages of: `P180` was tagged with
// guessed pages (`Property:P180`, `P180`) that no change of this wiki names, and kept the
// followed TTL: a label changed on the other repository showed through the wiki at once, and
// through the gateway an hour later. Once the wiki's namespaces are learned, an entity of a type
// it keeps no pages of keeps the short TTL (policy/dependencies.ts entityChangesUnnamed), as a
// term search of such a type and an entity named by its URI already did. And a formatted entity
// that is gone prints interface messages (`wikibase-deletedentity-*`): the MediaWiki namespace
// is a dependency of wbformatvalue's entity values too, as of wbformatentities'.
import { describe, expect, it } from 'vitest';
import { dependenciesOf, entityChangesUnnamed } from '../../src/policy/dependencies.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';
import { modulesOf } from '../../src/policy/request.js';
import { namespacesFromSiteinfo } from '../../src/mediawiki/titles.js';

/** Commons' layout: MediaInfo in File: pages, no entity namespace (siteinfo names none). */
const mediaInfoOnly = namespacesFromSiteinfo({
  namespaces: { '0': { id: 0, name: '' }, '6': { id: 6, name: 'File', canonical: 'File' } },
});
const itemsOnly = namespacesFromSiteinfo({
  namespaces: {
    '0': { id: 0, name: '' },
    '120': { id: 120, name: 'Item', canonical: 'Item', defaultcontentmodel: 'wikibase-item' },
  },
});
const withProperties = namespacesFromSiteinfo({
  namespaces: {
    '0': { id: 0, name: '' },
    '120': { id: 120, name: 'Item', canonical: 'Item', defaultcontentmodel: 'wikibase-item' },
    '122': { id: 122, name: 'Property', canonical: 'Property', defaultcontentmodel: 'wikibase-property' },
  },
});

const unnamed = (q: string, namespaces: ReturnType<typeof namespacesFromSiteinfo>) => {
  const query = parsePhpQuery(q);
  return entityChangesUnnamed(modulesOf(query), query, namespaces);
};
const value = (id: string) => encodeURIComponent(JSON.stringify({ type: 'wikibase-entityid', value: { id } }));

describe('an entity of a type the wiki keeps no pages of, named by plain id', () => {
  it.each([
    ['wbformatentities of a property on a MediaInfo repository', 'action=wbformatentities&ids=P180', mediaInfoOnly],
    ['wbformatvalue of a property value', `action=wbformatvalue&datatype=wikibase-property&datavalue=${value('P180')}&generate=text/html`, mediaInfoOnly],
    ['wbformatvalue typed by a remote property', `action=wbformatvalue&property=P180&datavalue=${value('Q5')}`, itemsOnly],
    ['wbgetentities of a property kept elsewhere', 'action=wbgetentities&ids=Q1|P31', itemsOnly],
    ['a lexeme`s form on a wiki without lexemes', 'action=wbgetentities&ids=L1-F1', withProperties],
  ])('%s: the short TTL', (_, q, ns) => {
    expect(unnamed(q, ns)).toBe(true);
  });

  it.each([
    ['a MediaInfo id names its File: page', 'action=wbgetentities&ids=M5', mediaInfoOnly],
    ['items and properties kept here', 'action=wbgetentities&ids=Q1|P31', withProperties],
    ['a formatted item kept here', 'action=wbformatentities&ids=Q1', itemsOnly],
  ])('%s: followed', (_, q, ns) => {
    expect(unnamed(q, ns)).toBe(false);
  });
});

describe('wbformatvalue of an entity', () => {
  const deps = (q: string) => {
    const query = parsePhpQuery(q);
    return dependenciesOf({ query, modules: modulesOf(query), override: undefined, answer: () => ({ result: 'x' }), namespaces: withProperties }).tags;
  };
  it('depends on the MediaWiki namespace, whose `wikibase-deletedentity-*` it prints for an entity gone', () => {
    expect(deps(`action=wbformatvalue&datatype=wikibase-property&datavalue=${value('P9')}&generate=text/html&format=json`)).toEqual(
      expect.arrayContaining(['p:Property:P9', 'n:8']),
    );
  });
  it('a plain string still depends on nothing', () => {
    const s = encodeURIComponent(JSON.stringify({ value: 'x', type: 'string' }));
    expect(deps(`action=wbformatvalue&datavalue=${s}&format=json`)).toEqual([]);
  });
});

describe('wbformatvalue of a datavalue not read here, typed by a property', () => {
  it('depends on the MediaWiki namespace too: it may name an entity gone', () => {
    const query = parsePhpQuery('action=wbformatvalue&property=P5&datavalue=%7Bnot%20json&generate=text/html&format=json');
    const tags = dependenciesOf({ query, modules: modulesOf(query), override: undefined, answer: () => ({ result: 'x' }), namespaces: withProperties }).tags;
    expect(tags).toContain('n:8');
  });
});
