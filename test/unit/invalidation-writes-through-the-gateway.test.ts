// What a write that passed through the gateway invalidates (src/policy/changes.ts
// changeFromWrite): the pages its parameters name and, above all, those its answer names as
// MediaWiki resolved them (a redirect followed, pageids or a generator turned into titles), with
// their subject/talk pairs and namespaces; the users whose rights or block it changed. Only
// the write modules it knows: a token does not make a write.
import { describe, expect, it } from 'vitest';
import { changeFromWrite, confirmedWrite } from '../../src/policy/changes.js';

const params = (p: Record<string, string>) => (name: string) => p[name];

describe('a write through the gateway', () => {
  it('action=purge by pageids or a generator: the pages its answer says it purged, and no list (anyone may purge)', () => {
    const c = changeFromWrite('purge', params({ action: 'purge', pageids: '12', forcelinkupdate: '1' }), undefined, {
      batchcomplete: true,
      purge: [
        { ns: 0, title: 'PgR 5', pageid: 12, purged: true, linkupdate: true },
        { ns: 0, title: 'Missing one', missing: true },
      ],
    });
    expect(c?.tags).toEqual(['p:PgR 5', 'i:12']);
    // Rate-limited: nothing purged, nothing invalidated.
    expect(changeFromWrite('purge', params({ action: 'purge', titles: 'X' }), undefined, { purge: [{ ns: 0, title: 'X' }], warnings: {} })?.tags).toEqual([]);
  });

  it('an edit of a redirect with redirect=1: the target, as the answer names it, not the redirect it did not change', () => {
    const c = changeFromWrite('edit', params({ action: 'edit', title: 'Redir', redirect: '1', token: 't' }), undefined, {
      edit: { result: 'Success', pageid: 8, title: 'Target', contentmodel: 'wikitext', newrevid: 40 },
    });
    expect(c?.tags).toEqual(['*', 'p:Target', 'n:0', 'i:8']);
  });

  it('an edit by pageid: the namespace of the page the answer names', () => {
    const c = changeFromWrite('edit', params({ action: 'edit', pageid: '9', token: 't' }), undefined, {
      edit: { result: 'Success', pageid: 9, title: 'Help:W4 2' },
    });
    expect(c?.tags).toEqual(expect.arrayContaining(['i:9', 'p:Help:W4 2', 'n:12']));
  });

  it('a move: both titles and the talk pages it took along', () => {
    const c = changeFromWrite('move', params({ action: 'move', from: 'A', to: 'B', token: 't' }), undefined, {
      move: { from: 'A', to: 'B', talkfrom: 'Talk:A', talkto: 'Talk:B' },
    });
    expect(c?.tags).toEqual(expect.arrayContaining(['p:A', 'p:B', 'p:Talk:A', 'p:Talk:B']));
  });

  it('nothing without an answer that confirms the write (a form PHP read otherwise, a failed write, XML)', () => {
    expect(changeFromWrite('edit', params({ action: 'edit', title: 'T', token: 't' }))).toBeUndefined();
    expect(changeFromWrite('edit', params({ action: 'edit', title: 'T', token: 't' }), undefined, { help: {} })).toBeUndefined();
    expect(changeFromWrite('edit', params({ action: 'edit', title: 'T', token: 't' }), undefined, { edit: { result: 'Failure' } })).toBeUndefined();
    expect(changeFromWrite('wbeditentity', params({ action: 'wbeditentity' }), undefined, { error: {} })).toBeUndefined();
  });

  it('block, unblock, userrights: the user`s sessions end', () => {
    expect(changeFromWrite('block', params({ action: 'block', user: 'Vandal', token: 't' }), undefined, { block: { user: 'Vandal', id: 3 } })?.users).toEqual([
      'Vandal',
    ]);
    expect(
      changeFromWrite('userrights', params({ action: 'userrights', user: 'Bot', token: 't' }), undefined, { userrights: { user: 'Bot', added: ['bot'] } })
        ?.users,
    ).toEqual(['Bot']);
  });

  it('a Wikibase write: the entity`s page, as a default repo and as items in the main namespace name it', () => {
    const c = changeFromWrite('wbeditentity', params({ action: 'wbeditentity', token: 't' }), undefined, { entity: { id: 'Q42', lastrevid: 9 }, success: 1 });
    expect(c?.tags).toEqual(expect.arrayContaining(['*', 'p:Item:Q42', 'p:Q42', 'n:0']));
  });

  it('a read module given a token (checktoken, parse&token=) changes nothing: no cheap way to empty every list', () => {
    expect(
      changeFromWrite('checktoken', params({ action: 'checktoken', type: 'csrf', token: 'x' }), undefined, { checktoken: { result: 'invalid' } }),
    ).toBeUndefined();
    expect(changeFromWrite('parse', params({ action: 'parse', text: 'x', token: 'x' }))).toBeUndefined();
    expect(changeFromWrite('options', params({ action: 'options', token: 'x' }))).toBeUndefined();
  });

  it('reads with no token (a POSTed query, a login with its own token) and logouts change nothing', () => {
    expect(changeFromWrite('query', params({ action: 'query', titles: 'X' }))).toBeUndefined();
    expect(changeFromWrite('login', params({ action: 'login', lgtoken: 't' }))).toBeUndefined();
    expect(changeFromWrite('logout', params({ action: 'logout', token: 't' }))).toBeUndefined();
  });

  it('a write whose form could not be read: the module its answer names (an upload), or none', () => {
    expect(confirmedWrite({ upload: { result: 'Success', filename: 'Big.png' } })).toBe('upload');
    expect(confirmedWrite({ upload: { result: 'Warning', warnings: {} } })).toBeUndefined();
    expect(confirmedWrite({ parse: { title: 'API', text: '…' } })).toBeUndefined();
    expect(confirmedWrite(undefined)).toBeUndefined();
  });

  it('a Wikibase write whose form could not be read: its answer`s entity, as wbeditentity', () => {
    const saved = { entity: { id: 'Q42', type: 'item', lastrevid: 77 }, success: 1 };
    expect(confirmedWrite(saved)).toBe('wbeditentity');
    const c = changeFromWrite('wbeditentity', () => undefined, undefined, saved)!;
    expect(c.tags).toEqual(expect.arrayContaining(['p:Q42', 't:item']));
    // Saved nothing: its page only, no list.
    const same = changeFromWrite('wbeditentity', () => undefined, undefined, { entity: { id: 'Q42', type: 'item', lastrevid: 77, nochange: '' }, success: 1 })!;
    expect(same.tags).not.toContain('*');
    expect(same.tags).not.toContain('t:item');
    expect(confirmedWrite({ error: { code: 'failed-save' } })).toBeUndefined();
    // A statement write's answer names its entity by the statement's GUID
    // (test/unit/wikibase-write-answers-name-their-entities.test.ts).
    expect(confirmedWrite({ success: 1, claim: { id: 'Q42$1' } })).toBe('wbsetclaim');
  });
});
