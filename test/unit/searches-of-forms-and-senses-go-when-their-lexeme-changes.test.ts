// WikibaseLexeme registers entity search for forms and senses (WikibaseLexeme.entitytypes.repo.php:
// `form` and `sense` each have an ENTITY_SEARCH_CALLBACK), so wbsearchentities&type=form and
// list=wbsearch&wbstype=sense are searches of their own type. A form or a sense has no page: it is
// kept on its lexeme's page (WikibaseLexeme.entitytypes.php: `sub-entity-types` of `lexeme`), so
// every change of one is a change of a Lexeme: page, which names `t:lexeme`. The searches depended
// on `t:form` / `t:sense`, which no change ever names: never invalidated. A sub-entity type's
// searches now depend on the type of the entity whose page keeps it (src/mediawiki/entities.ts
// entityTypeTag).
import { describe, expect, it } from 'vitest';
import { modulesOf } from '../../src/policy/request.js';
import { dependenciesOf } from '../../src/policy/dependencies.js';
import { changeConfirmed, changeFromRow, changeFromWrite } from '../../src/policy/changes.js';
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

function deps(q: string) {
  const query = parsePhpQuery(`${q}&format=json`);
  return dependenciesOf({ query, modules: modulesOf(query), override: undefined, answer: () => ({}), namespaces: ns }).tags;
}

/** Whether a change reaches an answer: they share a tag. */
const reaches = (change: readonly string[], answer: readonly string[]) => answer.some((t) => change.includes(t));

const lexemeEdit = changeFromRow({ type: 'edit', ns: 146, title: 'Lexeme:L1', pageid: 40, rcid: 9, timestamp: '2026-11-29T09:00:00Z' }, ns).tags;

describe('searches of sub-entities follow the page that keeps them', () => {
  it.each([
    ['action=wbsearchentities&search=run&language=en&type=form'],
    ['action=wbsearchentities&search=run&language=en&type=sense'],
    ['action=query&list=wbsearch&wbssearch=run&wbstype=form'],
    ['action=query&list=wbsearch&wbssearch=run&wbstype=sense'],
    ['action=query&generator=wbsearch&gwbssearch=run&gwbstype=form'],
  ])('%s depends on any lexeme changing, and an edit of a lexeme`s page reaches it', (q) => {
    const tags = deps(q);
    expect(tags).toEqual(['t:lexeme']);
    expect(reaches(lexemeEdit, tags)).toBe(true);
  });

  it('a write of a form through the gateway, and a confirmed PURGE of its lexeme`s page, reach them too', () => {
    const search = deps('action=wbsearchentities&search=run&language=en&type=form');
    const write = changeFromWrite('wbeditentity', (n) => ({ id: 'L1-F2' })[n], ns, { success: 1, entity: { id: 'L1-F2' } })!;
    expect(reaches(write.tags, search)).toBe(true);
    expect(reaches(changeConfirmed('Lexeme:L1', ns).tags, search)).toBe(true);
  });

  it('an item`s edit does not reach a search of forms, nor a wikitext edit', () => {
    const search = deps('action=wbsearchentities&search=run&language=en&type=sense');
    const item = changeFromRow({ type: 'edit', ns: 120, title: 'Item:Q1', rcid: 10, timestamp: '2026-11-29T09:00:00Z' }, ns).tags;
    const text = changeFromRow({ type: 'edit', ns: 0, title: 'Run', rcid: 11, timestamp: '2026-11-29T09:00:00Z' }, ns).tags;
    expect(reaches(item, search)).toBe(false);
    expect(reaches(text, search)).toBe(false);
  });
});
