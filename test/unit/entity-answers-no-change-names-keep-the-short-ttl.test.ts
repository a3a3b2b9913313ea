// Wikibase answers about entities whose changes no recentchanges row or PURGE of this wiki names
// kept the followed TTL: a federated property (REL1_39 federatedPropertiesEnabled), named by its
// URI (FederatedPropertyId), and a term search of a type the wiki keeps no pages of
// (`type=property` then searches the remote repository: ApiEntitySearchHelper). Tagged `*` or
// `t:property`, nothing cleared them for an hour. They keep the short TTL defaults now
// (policy/dependencies.ts changesAreSignalled, entityChangesUnnamed).
import { describe, expect, it } from 'vitest';
import { changesAreSignalled, entityChangesUnnamed } from '../../src/policy/dependencies.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';
import { modulesOf } from '../../src/policy/request.js';
import { DEFAULT_NAMESPACES, namespacesFromSiteinfo } from '../../src/mediawiki/titles.js';

const itemsOnly = namespacesFromSiteinfo({
  namespaces: {
    '0': { id: 0, name: '' },
    '120': { id: 120, name: 'Item', canonical: 'Item', defaultcontentmodel: 'wikibase-item' },
  },
});
const withLexemes = namespacesFromSiteinfo({
  namespaces: {
    '0': { id: 0, name: '' },
    '120': { id: 120, name: 'Item', canonical: 'Item', defaultcontentmodel: 'wikibase-item' },
    '122': { id: 122, name: 'Property', canonical: 'Property', defaultcontentmodel: 'wikibase-property' },
    '146': { id: 146, name: 'Lexeme', canonical: 'Lexeme', defaultcontentmodel: 'wikibase-lexeme' },
  },
});
const facts = (q: string) => {
  const query = parsePhpQuery(q);
  return { modules: modulesOf(query), query };
};
const signalled = (q: string) => {
  const { modules, query } = facts(q);
  return changesAreSignalled(modules, query);
};
const unnamed = (q: string, namespaces = itemsOnly) => {
  const { modules, query } = facts(q);
  return entityChangesUnnamed(modules, query, namespaces);
};

describe('an entity of another repository, named by its URI', () => {
  it.each([
    'action=wbgetentities&ids=http://www.wikidata.org/entity/P31',
    'action=wbgetentities&ids=Q1|http://www.wikidata.org/entity/P31',
    'action=wbformatentities&ids=http://www.wikidata.org/entity/P31',
  ])('%s: the short TTL', (q) => {
    expect(signalled(q)).toBe(false);
  });
  it('local ids keep the followed TTL', () => {
    expect(signalled('action=wbgetentities&ids=Q1|P31')).toBe(true);
  });
});

describe('a term search', () => {
  it.each(['action=wbsearchentities&search=x&type=property&language=en', 'action=query&list=wbsearch&wbssearch=x&wbstype=property'])(
    '%s of a type the wiki keeps no pages of: the short TTL',
    (q) => {
      expect(unnamed(q)).toBe(true);
    },
  );
  it('as a generator too', () => {
    expect(unnamed('action=query&generator=wbsearch&gwbssearch=x&gwbstype=property&prop=info')).toBe(true);
    expect(unnamed('action=query&generator=wbsearch&gwbssearch=x&gwbstype=item&prop=info')).toBe(false);
    // The same module as a list beside it reads its own type.
    expect(unnamed('action=query&generator=wbsearch&gwbssearch=x&gwbstype=item&list=wbsearch&wbssearch=y&wbstype=property')).toBe(true);
  });
  it.each([
    ['action=wbsearchentities&search=x&type=item&language=en', itemsOnly],
    ['action=wbsearchentities&search=x&language=en', itemsOnly],
    ['action=wbsearchentities&search=x&type=property&language=en', withLexemes],
    ['action=wbsearchentities&search=x&type=form&language=en', withLexemes],
    ['action=wbsearchentities&search=x&type=sense&language=en', withLexemes],
  ])('%s of a type it keeps (forms and senses in Lexeme pages): followed', (q, namespaces) => {
    expect(unnamed(q, namespaces)).toBe(false);
  });
  it('a type named like an object`s own property is no type the wiki keeps', () => {
    expect(unnamed('action=wbsearchentities&search=x&type=constructor&language=en')).toBe(true);
  });
  it('before the namespaces are learned, searches are not guessed pages (their tag is the type)', () => {
    expect(unnamed('action=wbsearchentities&search=x&type=property&language=en', DEFAULT_NAMESPACES)).toBe(false);
  });
});
