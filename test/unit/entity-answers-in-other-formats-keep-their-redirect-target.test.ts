// wbgetentities&ids=Q6&format=xml where Q6 redirects to Q1 answers with Q1's data: the answer
// depends on Q1, which only the answer names (`redirects` from Q6 to Q1). An answer the gateway
// cannot read (xml, php, …) was tagged with the request's Q6 alone and outlived Q1's next edit.
// As for page modules, an entity answer that cannot be read and could name entities the request
// does not (a redirect's target, an entity found by site and title) depends on any change
// (src/policy/dependencies.ts; src/mediawiki/modules.ts answerNamesNoOther for the modules whose
// answer cannot).
import { describe, expect, it } from 'vitest';
import { modulesOf } from '../../src/policy/request.js';
import { dependenciesOf } from '../../src/policy/dependencies.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';

function deps(q: string, answer: unknown) {
  const query = parsePhpQuery(q);
  return dependenciesOf({ query, modules: modulesOf(query), override: undefined, answer: () => answer }).tags;
}

describe('an entity answer the gateway cannot read', () => {
  it('wbgetentities of a redirected id in xml or php: any change', () => {
    for (const format of ['xml', 'php', 'rawfm'])
      expect(deps(`action=wbgetentities&ids=Q6&props=labels&format=${format}`, undefined)).toEqual(expect.arrayContaining(['*', 'p:Item:Q6']));
  });

  it('wbgetclaims in xml: any change (the claims of a redirect`s target)', () => {
    expect(deps('action=wbgetclaims&entity=Q6&format=xml', undefined)).toContain('*');
  });

  it('read as JSON, the redirect`s target and no more', () => {
    const answer = { entities: { Q6: { id: 'Q1', type: 'item', redirects: { from: 'Q6', to: 'Q1' } } }, success: 1 };
    const tags = deps('action=wbgetentities&ids=Q6&props=labels&format=json', answer);
    expect(tags).toEqual(expect.arrayContaining(['p:Item:Q6', 'p:Item:Q1']));
    expect(tags).not.toContain('*');
  });

  it('ids with sites and titles beside them: the entity found by title, from a JSON answer; any change from another', () => {
    const answer = { entities: { Q1: { id: 'Q1' }, Q3: { id: 'Q3', sitelinks: { enwiki: { site: 'enwiki', title: 'Germany' } } } }, success: 1 };
    expect(deps('action=wbgetentities&ids=Q1&sites=enwiki&titles=Germany&format=json', answer)).toContain('p:Item:Q3');
    expect(deps('action=wbgetentities&ids=Q1&sites=enwiki&titles=Germany&format=xml', undefined)).toContain('*');
  });

  it('wbformatvalue and wbformatentities name nothing the request does not: their entities alone, whatever the format', () => {
    const dv = encodeURIComponent(JSON.stringify({ type: 'wikibase-entityid', value: { 'entity-type': 'item', 'numeric-id': 2, id: 'Q2' } }));
    expect(deps(`action=wbformatvalue&datatype=wikibase-item&datavalue=${dv}&format=xml`, undefined).toSorted()).toEqual(['n:8', 'p:Item:Q2', 'p:Q2']);
    // (and the messages it prints for an entity that is gone: modules.ts ModuleFacts.messages)
    expect(deps('action=wbformatentities&ids=Q1&format=php', undefined).toSorted()).toEqual(['n:8', 'p:Item:Q1', 'p:Q1']);
  });
});
