// A write's pages were read from its request, and from its answer too: where the gateway read the
// form otherwise than PHP did (test/in-process/attack-write-form-read-apart-from-php.test.ts), the
// request named whatever the attacker put in the query string, and every title in it, split on
// `|`, took its namespace's lists, its entity type's searches and, on a property's page, every
// answer showing a statement (`dt`) along with it. The answer names what MediaWiki and Wikibase
// changed; the request's pages and entities now count only when the answer names none, and as
// one value each (no core write module takes a list of titles: `A|B` is an invalid title).
import { describe, expect, it } from 'vitest';
import { changeFromWrite } from '../../src/policy/changes.js';
import { DATATYPES } from '../../src/policy/dependencies.js';
import { namespacesFromSiteinfo } from '../../src/mediawiki/titles.js';

const ns = namespacesFromSiteinfo({
  namespaces: {
    '0': { id: 0, name: '' },
    '1': { id: 1, name: 'Talk', canonical: 'Talk' },
    '6': { id: 6, name: 'File', canonical: 'File' },
    '7': { id: 7, name: 'File talk', canonical: 'File talk' },
    '10': { id: 10, name: 'Template', canonical: 'Template' },
    '120': { id: 120, name: 'Item', canonical: 'Item', defaultcontentmodel: 'wikibase-item' },
    '122': { id: 122, name: 'Property', canonical: 'Property', defaultcontentmodel: 'wikibase-property' },
  },
});
const params = (p: Record<string, string>) => (name: string) => p[name];
const DECOY = 'Template:X|Property:P1|Item:Q1';

describe('a write whose request names pages its answer does not', () => {
  it('an edit of the sandbox: the sandbox`s tags alone, none of the titles the request named', () => {
    const c = changeFromWrite('edit', params({ action: 'edit', title: DECOY, text: 'x', token: '+\\' }), ns, {
      edit: { result: 'Success', pageid: 7, title: 'Sandbox', contentmodel: 'wikitext', oldrevid: 1, newrevid: 2 },
    })!;
    expect(c.tags).toEqual(['*', 'p:Sandbox', 'n:0', 'i:7']);
    expect(c.tags).not.toContain(DATATYPES);
    expect(c.tags).not.toContain('n:10');
  });

  it('a Wikibase write: the entity its answer names, not the one the request named', () => {
    const c = changeFromWrite('wbsetlabel', params({ action: 'wbsetlabel', id: 'P1', language: 'en', value: 'x', token: '+\\' }), ns, {
      success: 1,
      entity: { id: 'Q5', type: 'item', labels: { en: { language: 'en', value: 'x' } }, lastrevid: 9 },
    })!;
    expect(c.tags).toContain('p:Item:Q5');
    expect(c.tags.filter((t) => t.includes('P1'))).toEqual([]);
    expect(c.tags).not.toContain(DATATYPES);
  });

  it('an answer that names no page (filerevert): the request`s title, as one value', () => {
    const c = changeFromWrite('filerevert', params({ action: 'filerevert', filename: 'A.png|B.png', archivename: 'x', token: '+\\' }), ns, {
      filerevert: { result: 'Success' },
    })!;
    expect(c.tags.filter((t) => t.startsWith('p:'))).toEqual(['p:File:A.png|B.png', 'p:File talk:A.png|B.png']);
  });

  it('a Wikibase answer that names no entity: the request`s entity', () => {
    const c = changeFromWrite('wblremovesense', params({ action: 'wblremovesense', id: 'L3-S1', token: '+\\' }), undefined, { success: 1, lastrevid: 9 })!;
    expect(c.tags).toContain('p:Lexeme:L3');
  });
});
