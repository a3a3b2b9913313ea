// Every write module's `pageid` or `fromid` was read, split on `|`, whether the module takes it or
// not and whether the write saved anything: an anonymous null edit of one page given
// `fromid=1|2|…` (165,650 ids in a 1 MiB body) evicted the answers of every page listed, on every
// replica. MediaWiki ignores a parameter its module does not define (ApiMain::reportUnusedParams:
// a warning) and reads its own as one integer. Now only a module's own page id parameters are read
// (mediawiki/modules.ts WriteFacts.pageIdParameters), one integer each.
import { describe, expect, it } from 'vitest';
import { changeFromWrite } from '../../src/policy/changes.js';

const params = (p: Record<string, string>) => (name: string) => p[name];
const ids = Array.from({ length: 5_000 }, (_, i) => String(i + 1)).join('|');
const pageIdTags = (tags: readonly string[]) => tags.filter((t) => t.startsWith('i:'));

describe('a write naming page ids', () => {
  it('a null edit given another module`s `fromid`: no page but its own', () => {
    const c = changeFromWrite('edit', params({ action: 'edit', title: 'Sandbox', text: 'same', fromid: ids, token: '+\\' }), undefined, {
      edit: { result: 'Success', pageid: 7, title: 'Sandbox', contentmodel: 'wikitext', nochange: '' },
    })!;
    expect(pageIdTags(c.tags)).toEqual(['i:7']);
  });

  it('`pageid` listing many: not one integer, so none (the wiki refuses it)', () => {
    const c = changeFromWrite('edit', params({ action: 'edit', pageid: ids, text: 'x', token: '+\\' }), undefined, {
      edit: { result: 'Success', pageid: 7, title: 'Sandbox', contentmodel: 'wikitext', oldrevid: 1, newrevid: 2 },
    })!;
    expect(pageIdTags(c.tags)).toEqual(['i:7']);
  });

  it('a refused tag change given `pageid`: nothing at all', () => {
    const c = changeFromWrite('tag', params({ action: 'tag', revid: '0', pageid: ids, add: 'x', token: '+\\' }), undefined, {
      tag: [{ revid: 0, status: 'error', errors: [{ type: 'error', code: 'nosuchrevid' }] }],
    });
    expect(pageIdTags(c?.tags ?? [])).toEqual([]);
  });

  it('a Wikibase write given `pageid`: its entity`s page, no id', () => {
    const c = changeFromWrite('wbsetlabel', params({ action: 'wbsetlabel', id: 'Q7', language: 'en', value: 'x', pageid: ids, token: '+\\' }), undefined, {
      entity: { id: 'Q7', type: 'item', lastrevid: 33, nochange: '' },
      success: 1,
    })!;
    expect(pageIdTags(c.tags)).toEqual([]);
  });

  it('the module`s own: edit`s `pageid`, move`s `fromid`, mergehistory`s `fromid` and `toid`, read as integers', () => {
    const edit = changeFromWrite('edit', params({ action: 'edit', pageid: '+05', text: 'x', token: 't' }), undefined, {
      edit: { result: 'Success', title: 'Sandbox', oldrevid: 1, newrevid: 2 },
    })!;
    expect(pageIdTags(edit.tags)).toEqual(['i:5']);
    const move = changeFromWrite('move', params({ action: 'move', fromid: '12', to: 'B', token: 't' }), undefined, { move: { from: 'A', to: 'B' } })!;
    expect(pageIdTags(move.tags)).toEqual(['i:12']);
    const merge = changeFromWrite('mergehistory', params({ action: 'mergehistory', fromid: '3', toid: '4', token: 't' }), undefined, {
      mergehistory: { from: 'A', to: 'B', timestamp: '2026-11-30T00:00:00Z' },
    })!;
    expect(pageIdTags(merge.tags).sort()).toEqual(['i:3', 'i:4']);
  });
});
