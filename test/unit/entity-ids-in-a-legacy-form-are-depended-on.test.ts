// wbformatvalue reads its datavalue as Wikibase does: an entity-id value may name its entity by
// `id` or in the legacy form `{"entity-type":"item","numeric-id":2}` (Wikibase DataModel
// EntityIdValue::newFromArray, LegacyIdInterpreter::newIdFromTypeAndNumber), and the answer
// prints that entity's label. Read by `id` alone, the legacy form left the answer depending on
// nothing, stale for its whole TTL after the label changed. Whatever names an entity in a form
// not read (src/mediawiki/wikibase-params.ts collectEntityIds, src/policy/dependencies.ts) makes the
// answer depend on any change, never on nothing.
import { describe, expect, it } from 'vitest';
import { modulesOf } from '../../src/policy/request.js';
import { dependenciesOf } from '../../src/policy/dependencies.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';

function deps(q: string, answer: unknown = { result: 'x' }) {
  const query = parsePhpQuery(q);
  return dependenciesOf({ query, modules: modulesOf(query), override: undefined, answer: () => answer }).tags;
}
const formatValue = (value: unknown, extra = '') =>
  deps(`action=wbformatvalue&datatype=wikibase-item&generate=text/plain&format=json${extra}&datavalue=${encodeURIComponent(JSON.stringify(value))}`);

describe('entity ids in a datavalue, in every form Wikibase reads', () => {
  it('the legacy numeric-id form names its entity`s page, as the id form does', () => {
    const legacy = formatValue({ type: 'wikibase-entityid', value: { 'entity-type': 'item', 'numeric-id': 2 } });
    expect(legacy.toSorted()).toEqual(['n:8', 'p:Item:Q2', 'p:Q2']);
    expect(legacy).toEqual(formatValue({ type: 'wikibase-entityid', value: { 'entity-type': 'item', 'numeric-id': 2, id: 'Q2' } }));
    expect(formatValue({ type: 'wikibase-entityid', value: { 'entity-type': 'property', 'numeric-id': '31' } })).toContain('p:Property:P31');
    expect(formatValue({ type: 'wikibase-entityid', value: { 'entity-type': 'lexeme', 'numeric-id': 7 } })).toContain('p:Lexeme:L7');
  });

  it('both, when the number and the id disagree (EntityIdValue::newFromArray reads one, the repository`s deserializer the other)', () => {
    const tags = formatValue({ type: 'wikibase-entityid', value: { 'entity-type': 'item', 'numeric-id': 2, id: 'Q5' } });
    expect(tags).toEqual(expect.arrayContaining(['p:Item:Q2', 'p:Item:Q5']));
  });

  it('a form or a sense: its lexeme`s page', () => {
    expect(formatValue({ type: 'wikibase-entityid', value: { 'entity-type': 'form', id: 'L1-F2' } }).toSorted()).toEqual(['n:8', 'p:L1', 'p:Lexeme:L1']);
  });

  it('a form not read here depends on any change, never on nothing', () => {
    // A type with no number of its own, or one no prefix is known for.
    expect(formatValue({ type: 'wikibase-entityid', value: { 'entity-type': 'form', 'numeric-id': 2 } })).toContain('*');
    expect(formatValue({ type: 'wikibase-entityid', value: { 'entity-type': 'mediainfo', 'numeric-id': 5 } })).toContain('*');
    // No number, no id; a number that is none.
    expect(formatValue({ type: 'wikibase-entityid', value: { 'entity-type': 'item' } })).toContain('*');
    expect(formatValue({ type: 'wikibase-entityid', value: { 'entity-type': 'item', 'numeric-id': 'two' } })).toContain('*');
    // An id that is not an entity id, nested past what is read, with a property given beside it.
    expect(formatValue({ type: 'wikibase-entityid', value: { id: 'X7' } })).toContain('*');
    let deep: unknown = { id: 'Q1' };
    for (let i = 0; i < 12; i++) deep = { value: deep };
    expect(formatValue(deep, '&property=P2')).toContain('*');
  });

  it('a request naming an entity that maps to no page (wbgetentities, wbgetclaims) depends on any change', () => {
    // E5: an id of a type the gateway maps to no page (M5, MediaInfo, names page 5 by id:
    // mediainfo-ids-depend-on-their-file-page).
    expect(deps('action=wbgetentities&ids=Q1|E5&format=json', { entities: { Q1: { id: 'Q1' } } })).toContain('*');
    expect(deps('action=wbgetclaims&claim=X1$abc&format=json', { claims: {} })).toContain('*');
    expect(deps('action=wbgetentities&ids=Q1&format=json', { entities: { Q1: { id: 'Q1' } } })).not.toContain('*');
  });
});
