// Until the gateway learns the wiki's entity namespaces from siteinfo, an entity id stands for
// the pages of both layouts Wikibase's examples use (`Item:Q1`, `Q1`: mediawiki/entities.ts
// entityPageTitles). A repository whose item namespace is named otherwise (`Objekt:Q1`) has
// changes that name neither, so an answer stored then was never invalidated and, with the
// follower vouching, kept the followed TTL. Such an answer keeps the short TTL defaults until the
// layout is learned (policy/dependencies.ts entityPagesGuessed, steps/flow.ts fetchAndStore).
import { describe, expect, it } from 'vitest';
import { entityPagesGuessed } from '../../src/policy/dependencies.js';
import { DEFAULT_NAMESPACES, namespacesFromSiteinfo } from '../../src/mediawiki/titles.js';

const learned = namespacesFromSiteinfo({
  namespaces: {
    '0': { id: 0, name: '' },
    '120': { id: 120, name: 'Objekt', canonical: 'Item', defaultcontentmodel: 'wikibase-item' },
  },
});
const noRepository = namespacesFromSiteinfo({ namespaces: { '0': { id: 0, name: '' } } });

describe('a Wikibase answer before the wiki`s entity namespaces are learned', () => {
  it.each([['wbgetentities'], ['wbgetclaims'], ['wbformatentities'], ['wbformatvalue']])('%s: its pages are a guess', (module) => {
    expect(entityPagesGuessed([module], DEFAULT_NAMESPACES)).toBe(true);
  });
  it('once learned, no guess; nor for modules that name no entity (a search depends on its type)', () => {
    expect(entityPagesGuessed(['wbgetentities'], learned)).toBe(false);
    // Learned without an entity namespace (Commons: MediaInfo in File: pages, named by page id).
    expect(entityPagesGuessed(['wbgetentities'], noRepository)).toBe(false);
    expect(entityPagesGuessed(['wbsearchentities'], DEFAULT_NAMESPACES)).toBe(false);
    expect(entityPagesGuessed(['query', 'revisions'], DEFAULT_NAMESPACES)).toBe(false);
    expect(entityPagesGuessed(['parse'], DEFAULT_NAMESPACES)).toBe(false);
  });
});
