// Wikibase writes through the gateway, named by their answers. An import of a property page may
// bring any revision of its history (another datatype) whatever its summary says: it ends the
// answers that show datatypes (`dt`), as a deletion or an undeletion does. A write whose form the
// gateway could not read (over the body buffer, past max_input_vars) is named by its answer
// alone, and only an answer with `entity` was recognised: a statement write (`claim`, `claims`),
// a merge (`from`, `to`), a redirect (`redirect`: CreateRedirect answers the target's id as a
// string), a form or a sense invalidated nothing on the writer's replica
// (policy/changes.ts confirmedWrite, DATATYPE_WRITES).
import { describe, expect, it } from 'vitest';
import { changeFromWrite, confirmedWrite } from '../../src/policy/changes.js';
import { namespacesFromSiteinfo } from '../../src/mediawiki/titles.js';

const NS = namespacesFromSiteinfo({
  namespaces: {
    '0': { id: 0, name: '' },
    '120': { id: 120, name: 'Item', canonical: 'Item', defaultcontentmodel: 'wikibase-item' },
    '122': { id: 122, name: 'Property', canonical: 'Property', defaultcontentmodel: 'wikibase-property' },
    '146': { id: 146, name: 'Lexeme', canonical: 'Lexeme', defaultcontentmodel: 'wikibase-lexeme' },
  },
});
const PAGEINFO = { pageinfo: { lastrevid: 41 }, success: 1 };
const unreadable = (answer: Record<string, unknown>) => {
  const action = confirmedWrite(answer);
  return { action, tags: action === undefined ? [] : (changeFromWrite(action, () => undefined, NS, answer)?.tags ?? []) };
};

describe('an import of a property page', () => {
  it('ends the answers that show datatypes', () => {
    const answer = { import: [{ ns: 122, title: 'Property:P2', revisions: 1 }] };
    const c = changeFromWrite('import', () => undefined, NS, answer)!;
    expect(c.tags).toContain('p:Property:P2');
    expect(c.tags).toContain('dt');
  });
});

describe('a Wikibase write whose form could not be read, named by its answer', () => {
  it.each([
    ['a statement setter`s claim', { ...PAGEINFO, claim: { id: 'Q1$5627445f-43cb-ed6d-3adb-760e85bd17ee', mainsnak: {} } }, 'p:Item:Q1'],
    ['wbremoveclaims` claims', { ...PAGEINFO, claims: ['q3$0f0b2e24-4bd4-4a2a-a1a8-000000000001'] }, 'p:Item:Q3'],
    ['a merge`s items', { success: 1, redirected: 1, from: { id: 'Q6', lastrevid: 28 }, to: { id: 'Q1', lastrevid: 29 } }, 'p:Item:Q6'],
    ['a redirect`s target', { success: 1, redirect: 'Q1' }, 'p:Item:Q1'],
    ['a form', { success: 1, lastrevid: 5, form: { id: 'L1-F3', representations: {} } }, 'p:Lexeme:L1'],
    ['a sense', { success: 1, lastrevid: 6, sense: { id: 'L1-S2', glosses: {} } }, 'p:Lexeme:L1'],
  ])('%s', (_what, answer, page) => {
    const { action, tags } = unreadable(answer);
    expect(action).toBeDefined();
    expect(tags).toContain(page);
  });

  it('a merge names both items', () => {
    expect(unreadable({ success: 1, redirected: 1, from: { id: 'Q6' }, to: { id: 'Q1' } }).tags).toEqual(expect.arrayContaining(['p:Item:Q6', 'p:Item:Q1']));
  });

  it('a reference alone names no entity: nothing, the wiki`s PURGE and the follower`s row do', () => {
    expect(unreadable({ ...PAGEINFO, reference: { hash: 'abc', snaks: {} } }).action).toBeUndefined();
  });

  it('a read`s answer is none of these (class 48)', () => {
    expect(confirmedWrite({ success: 1, entities: { Q1: { id: 'Q1' } } })).toBeUndefined();
    expect(confirmedWrite({ claims: { P2: [{ id: 'Q1$x' }] } })).toBeUndefined();
  });
});
