// A null edit needs no account and no real change: an anonymous client POSTs action=edit with the
// anonymous token `+\` and text the page already has, and MediaWiki answers
// `{"edit":{"result":"Success",…,"nochange":""}}` with no revision and no recentchanges row
// (ApiEditPage). Taken for a change, it emptied every list answer (`*`) and its namespace's on every
// replica, as often as the client liked. A write whose answer says it changed nothing invalidates
// at most the pages it names (src/policy/changes.ts changeFromWrite, src/mediawiki/modules.ts
// WriteFacts.unchanged): the edit's null edit, a Wikibase write flagged `entity.nochange`
// (ResultBuilder::addRevisionIdFromStatusToResult; capture 82-anon-wbsetlabel-anon-token of the
// Wikibase reference), a tag that was a no-op, an import of nothing new, userrights that changed no group.
import { describe, expect, it } from 'vitest';
import { changeFromWrite } from '../../src/policy/changes.js';

const params = (p: Record<string, string>) => (name: string) => p[name];
const anonEdit = params({ action: 'edit', title: 'Sandbox', appendtext: '', nocreate: '1', token: '+\\' });

describe('a write whose answer says nothing changed empties no list', () => {
  it('a null edit (formatversion 1 and 2): the page`s own answers, nothing else', () => {
    for (const nochange of ['', true]) {
      const c = changeFromWrite('edit', anonEdit, undefined, { edit: { result: 'Success', pageid: 5, title: 'Sandbox', contentmodel: 'wikitext', nochange } });
      expect(c?.tags.toSorted()).toEqual(['i:5', 'p:Sandbox']);
      expect(c?.users).toEqual([]);
    }
  });

  it('the same edit that made a revision still changes the lists', () => {
    const c = changeFromWrite('edit', anonEdit, undefined, {
      edit: { result: 'Success', pageid: 5, title: 'Sandbox', contentmodel: 'wikitext', oldrevid: 7, newrevid: 8, newtimestamp: '2026-11-28T20:00:00Z' },
    });
    expect(c?.tags).toEqual(expect.arrayContaining(['*', 'n:0', 'p:Sandbox']));
  });

  it('a Wikibase write that saved nothing new (an anonymous wbsetlabel with the label the item has): its entity`s page only', () => {
    const answer = { entity: { labels: { en: { language: 'en', value: 'Potsdam' } }, id: 'Q7', type: 'item', lastrevid: 33, nochange: '' }, success: 1 };
    const c = changeFromWrite('wbsetlabel', params({ action: 'wbsetlabel', id: 'Q7', language: 'en', value: 'Potsdam', token: '+\\' }), undefined, answer);
    expect(c?.tags.toSorted()).toEqual(['p:Item:Q7', 'p:Q7']);
    const edit = changeFromWrite('wbeditentity', params({ action: 'wbeditentity', id: 'Q1' }), undefined, {
      success: 1,
      entity: { id: 'Q1', type: 'item', nochange: true },
    });
    expect(edit?.tags).not.toContain('*');
    expect(edit?.tags).not.toContain('t:item');
    // Without the flag it is a change, as before.
    expect(changeFromWrite('wbsetlabel', params({ id: 'Q7' }), undefined, { ...answer, entity: { ...answer.entity, nochange: undefined } })?.tags).toContain(
      '*',
    );
  });

  it('a tag, an import, a userrights that changed nothing: no list, no session', () => {
    expect(
      changeFromWrite('tag', params({ action: 'tag', revid: '5', add: 'x' }), undefined, { tag: [{ revid: 5, status: 'success', noop: true }] })?.tags,
    ).toEqual([]);
    expect(changeFromWrite('import', params({ action: 'import' }), undefined, { import: [{ ns: 0, title: 'Imported', revisions: 0 }] })?.tags).toEqual([
      'p:Imported',
    ]);
    const rights = changeFromWrite('userrights', params({ action: 'userrights', user: 'Bot' }), undefined, {
      userrights: { user: 'Bot', userid: 3, added: [], removed: [] },
    });
    expect(rights?.tags).toEqual([]);
    expect(rights?.users).toEqual([]);
  });

  it('a list result with one item that changed is a change', () => {
    const c = changeFromWrite('tag', params({ action: 'tag', revid: '5|6', add: 'x' }), undefined, {
      tag: [
        { revid: 5, status: 'success', noop: true },
        { revid: 6, status: 'success', actionlogid: 9, added: ['x'], removed: [] },
      ],
    });
    expect(c?.tags).toContain('*');
  });
});
