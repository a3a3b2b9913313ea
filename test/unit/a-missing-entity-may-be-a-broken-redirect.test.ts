// wbgetentities answers an id as missing when it is a redirect whose target is gone or is itself
// a redirect: Wikibase resolves one level and, not resolving the second time, answers the id
// asked for with `{"id":"Q6","missing":""}`, naming no target (repo/includes/Api/GetEntities.php
// getEntityRevision; capture 89 of the Wikibase reference for the shape). The target coming back
// (Item:Q1 undeleted, a bad merge of Q1 undone) names only Item:Q1: such an answer depends on any
// change, or it answered "missing" for up to the followed TTL after the target came back.
// A property cannot redirect (PropertyContent has no newFromRedirect); a MediaInfo missing is its
// File: page without one, which that page's own changes name.
import { describe, expect, it } from 'vitest';
import { modulesOf } from '../../src/policy/request.js';
import { dependenciesOf } from '../../src/policy/dependencies.js';
import { changeFromRow } from '../../src/policy/changes.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';
import { namespacesFromSiteinfo } from '../../src/mediawiki/titles.js';

const ns = namespacesFromSiteinfo({
  namespaces: {
    '0': { id: 0, name: '' },
    '120': { id: 120, name: 'Item', canonical: 'Item', defaultcontentmodel: 'wikibase-item' },
    '122': { id: 122, name: 'Property', canonical: 'Property', defaultcontentmodel: 'wikibase-property' },
    '146': { id: 146, name: 'Lexeme', canonical: 'Lexeme', defaultcontentmodel: 'wikibase-lexeme' },
  },
});

function tagsOf(id: string, extra = ''): readonly string[] {
  const query = parsePhpQuery(`action=wbgetentities&ids=${id}&format=json${extra}`);
  const answer = { entities: { [id.toUpperCase()]: { id: id.toUpperCase(), missing: '' } }, success: 1 };
  return dependenciesOf({ query, modules: modulesOf(query), override: undefined, answer: () => answer, namespaces: ns }).tags;
}

/** The target's page changing: an undo of a bad merge, an undeletion. */
const targetBack = [
  changeFromRow({ type: 'edit', ns: 120, title: 'Item:Q1', pageid: 11, rcid: 7, timestamp: '2026-11-28T00:00:00Z', tags: ['mw-undo'] }, ns).tags,
  changeFromRow({ type: 'log', logtype: 'delete', logaction: 'restore', ns: 120, title: 'Item:Q1', pageid: 11, rcid: 8, timestamp: '2026-11-28T00:00:01Z' }, ns)
    .tags,
  changeFromRow({ type: 'edit', ns: 146, title: 'Lexeme:L1', pageid: 12, rcid: 9, timestamp: '2026-11-28T00:00:02Z' }, ns).tags,
];
const reaches = (change: readonly string[], answer: readonly string[]) => answer.some((t) => change.includes(t));

describe('an entity asked for by id and answered missing', () => {
  it.each(['Q6', 'q6', 'L6', 'L6-F1'])('%s (may be a redirect): any change ends it, the target coming back included', (id) => {
    for (const change of targetBack) expect(reaches(change, tagsOf(id))).toBe(true);
  });
  it('redirects=no: a redirect is missing whatever its target, only its own page`s changes', () => {
    for (const change of targetBack) expect(reaches(change, tagsOf('Q6', '&redirects=no'))).toBe(false);
    expect(tagsOf('Q6', '&redirects=no')).toEqual(['p:Item:Q6']);
    expect(reaches(targetBack[0]!, tagsOf('Q6', '&redirects=yes'))).toBe(true);
  });
  it('a property (cannot redirect): only its own page`s changes', () => {
    for (const change of targetBack) expect(reaches(change, tagsOf('P6'))).toBe(false);
    expect(tagsOf('P6')).toEqual(['p:Property:P6']);
  });
  it('a MediaInfo (its File: page without one): only that page`s changes', () => {
    expect(tagsOf('M123')).toEqual(['i:123']);
  });
});
