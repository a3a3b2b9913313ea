// Every snak of a Wikibase entity answer shows its property's datatype ("datatype":"string"),
// which Wikibase reads from the property (Wikibase's ResultBuilder; the test extension's
// wbgetentities does the same: test/wiki-extension/WikiedgeWikibase). No edit of the property changes it, and deleting the property takes
// it away, yet a cached item answer kept showing it: its dependencies named its own page and the
// entities its values reference, not the properties. One tag (dependencies.ts DATATYPES) on
// every entity answer with statements, which only the deletion or restoration of a property's
// page carries: a property's label edit (many a day on Wikidata) evicts no item.
import { describe, expect, it } from 'vitest';
import { modulesOf } from '../../src/policy/request.js';
import { DATATYPES, dependenciesOf } from '../../src/policy/dependencies.js';
import { changeConfirmed, changeFromRow, changeFromWrite } from '../../src/policy/changes.js';
import { existenceChanged } from '../../src/invalidation/purge-confirmation.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';
import { namespacesFromSiteinfo } from '../../src/mediawiki/titles.js';

const ns = namespacesFromSiteinfo({
  namespaces: {
    '0': { id: 0, name: '' },
    '120': { id: 120, name: 'Item', canonical: 'Item', defaultcontentmodel: 'wikibase-item' },
    '122': { id: 122, name: 'Property', canonical: 'Property', defaultcontentmodel: 'wikibase-property' },
  },
});

function deps(q: string, answer: unknown) {
  const query = parsePhpQuery(q);
  return dependenciesOf({ query, modules: modulesOf(query), override: undefined, answer: () => answer, namespaces: ns }).tags;
}

const SNAK = { snaktype: 'value', property: 'P4', datavalue: { value: 'B-1', type: 'string' }, datatype: 'string' };
const CLAIMS = { P4: [{ mainsnak: SNAK, type: 'statement', id: 'Q1$A1778BDD-DF02-4B02-9FD4-ED5334872CFA', rank: 'normal' }] };

describe('entity answers that show datatypes', () => {
  it('wbgetentities of an item with statements depends on them; one without statements does not', () => {
    const withClaims = { entities: { Q1: { pageid: 11, ns: 120, title: 'Item:Q1', type: 'item', id: 'Q1', labels: {}, claims: CLAIMS } }, success: 1 };
    expect(deps('action=wbgetentities&ids=Q1&format=json', withClaims)).toContain(DATATYPES);
    const without = { entities: { Q9: { pageid: 19, ns: 120, title: 'Item:Q9', type: 'item', id: 'Q9', labels: {}, claims: {} } }, success: 1 };
    expect(deps('action=wbgetentities&ids=Q9&format=json', without)).not.toContain(DATATYPES);
    // props=labels: no statements shown.
    const labels = { entities: { Q1: { type: 'item', id: 'Q1', labels: { en: { language: 'en', value: 'Berlin' } } } }, success: 1 };
    expect(deps('action=wbgetentities&ids=Q1&props=labels&format=json', labels)).not.toContain(DATATYPES);
  });

  it('wbgetclaims with claims, a lexeme`s forms with statements and MediaInfo`s statements depend on them too', () => {
    expect(deps('action=wbgetclaims&entity=Q1&format=json', { claims: CLAIMS })).toContain(DATATYPES);
    expect(deps('action=wbgetclaims&entity=Q9&format=json', { claims: {} })).not.toContain(DATATYPES);
    const lexeme = { entities: { L1: { type: 'lexeme', id: 'L1', claims: {}, forms: [{ id: 'L1-F1', claims: CLAIMS }], senses: [] } }, success: 1 };
    expect(deps('action=wbgetentities&ids=L1&format=json', lexeme)).toContain(DATATYPES);
    const mediainfo = { entities: { M5: { type: 'mediainfo', id: 'M5', statements: CLAIMS } }, success: 1 };
    expect(deps('action=wbgetentities&ids=M5&format=json', mediainfo)).toContain(DATATYPES);
  });
});

describe('changes that carry it', () => {
  const row = (r: Record<string, unknown>) =>
    changeFromRow({ rcid: 1, timestamp: '2026-11-28T20:12:27Z', ...r } as Parameters<typeof changeFromRow>[0], ns).tags;

  it('the deletion and the restoration of a property`s page', () => {
    // The shape of a delete log row in list=recentchanges.
    expect(row({ type: 'log', ns: 122, title: 'Property:P5', pageid: 10, logtype: 'delete', logaction: 'delete', logparams: {} })).toContain(DATATYPES);
    expect(row({ type: 'log', ns: 122, title: 'Property:P5', pageid: 10, logtype: 'delete', logaction: 'restore', logparams: {} })).toContain(DATATYPES);
    const deleted = changeFromWrite('delete', (n) => (n === 'title' ? 'Property:P5' : undefined), ns, {
      delete: { title: 'Property:P5', reason: 'x', logid: 30 },
    });
    expect(deleted?.tags).toContain(DATATYPES);
    const restored = changeFromWrite('undelete', (n) => (n === 'title' ? 'Property:P5' : undefined), ns, {
      undelete: { title: 'Property:P5', revisions: 3, fileversions: 0, reason: '' },
    });
    expect(restored?.tags).toContain(DATATYPES);
  });

  it('with PURGEs alone: a property`s page the wiki confirms gone, or back', () => {
    expect(existenceChanged('r31', { title: 'Property:P5', missing: true })).toBe(true);
    expect(existenceChanged(undefined, { title: 'Property:P5', missing: true })).toBe(true);
    expect(existenceChanged('missing', { title: 'Property:P5', missing: false, revid: 40 })).toBe(true);
    expect(existenceChanged('r31', { title: 'Property:P5', missing: false, revid: 40 })).toBe(false);
    expect(existenceChanged(undefined, { title: 'Property:P5', missing: false, revid: 40 })).toBe(false);
    expect(existenceChanged('missing', { title: 'Property:P5', missing: true })).toBe(false);
    expect(changeConfirmed('Property:P5', ns, false, undefined, true).tags).toContain(DATATYPES);
    expect(changeConfirmed('Property:P5', ns, false, 10, false).tags).not.toContain(DATATYPES);
    expect(changeConfirmed('Item:Q5', ns, false, undefined, true).tags).not.toContain(DATATYPES);
  });

  it('not the hiding of a property`s revision or log entry (the page stays)', () => {
    for (const logaction of ['revision', 'event'])
      expect(row({ type: 'log', ns: 122, title: 'Property:P5', pageid: 10, logtype: 'delete', logaction, logparams: {} })).not.toContain(DATATYPES);
  });

  it('not an edit of a property, nor the deletion of an item or of any other page', () => {
    // A label edit of a property, as Wikibase summarises it.
    expect(row({ type: 'edit', ns: 122, title: 'Property:P2', pageid: 7, revid: 31, comment: '/* wbsetlabel-set:1|en */ population size' })).not.toContain(
      DATATYPES,
    );
    expect(row({ type: 'log', ns: 120, title: 'Item:Q8', pageid: 18, logtype: 'delete', logaction: 'delete', logparams: {} })).not.toContain(DATATYPES);
    expect(row({ type: 'log', ns: 0, title: 'Main Page', pageid: 1, logtype: 'delete', logaction: 'delete', logparams: {} })).not.toContain(DATATYPES);
    const edit = changeFromWrite('wbsetlabel', (n) => (n === 'id' ? 'P2' : n === 'language' ? 'en' : undefined), ns, {
      entity: { id: 'P2', type: 'property', lastrevid: 31 },
      success: 1,
    });
    expect(edit?.tags ?? []).not.toContain(DATATYPES);
  });
});
