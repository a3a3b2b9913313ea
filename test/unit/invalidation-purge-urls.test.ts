// The page a CDN PURGE names (src/mediawiki/purge-url.ts), for every URL form MediaWiki 1.39
// sends (HtmlCacheUpdater::getUrls(), Title::getCdnUrls()) and encoded variants.
import { describe, expect, it } from 'vitest';
import { changeConfirmed, changeFromPurge, changeFromRow } from '../../src/policy/changes.js';
import { purgedTitle } from '../../src/mediawiki/purge-url.js';

const PATHS = { script: '/w/index.php', articlePath: '/wiki/$1', uploadPath: '/w/images' };

describe('purgedTitle', () => {
  it.each([
    ['http://127.0.0.1:8080/w/index.php/Lab_Purge_1795211733', 'Lab Purge 1795211733'],
    ['http://127.0.0.1:8080/w/index.php/Talk:Lab_Purge_1795211733', 'Talk:Lab Purge 1795211733'],
    ['http://127.0.0.1:8080/w/index.php?title=Talk:Lab_Purge_1795211733&action=history', 'Talk:Lab Purge 1795211733'],
    ['http://wiki/w/index.php?title=MediaWiki:Common.js&action=raw&ctype=text/javascript', 'MediaWiki:Common.js'],
    ['http://wiki/w/index.php?title=Main_Page', 'Main Page'],
    ['http://wiki/wiki/Main_Page', 'Main Page'],
    ['/wiki/Main%20Page', 'Main Page'],
    ['http://wiki/w/index.php/Lab_weird_(x)/%C3%A9%27s_%26_q%2Br%3F%3Ds;t@u$v!w*y,z~:%C3%BC', "Lab weird (x)/é's & q+r?=s;t@u$v!w*y,z~:ü"],
    ['http://wiki/w/index.php/%4Cab', 'Lab'],
    ['http://wiki/w/images/0/0f/Lab_New_%281%29.png', 'File:Lab New (1).png'],
    ['http://wiki/w/images/archive/d/d7/20261124015946%21Lab_Moved.png', 'File:Lab Moved.png'],
    ['http://wiki/w/images/thumb/0/0f/Lab.png/120px-Lab.png', 'File:Lab.png'],
    ['http://wiki/w/images/thumb/archive/d/d7/20261124015946%21Lab.png/120px-Lab.png', 'File:Lab.png'],
  ])('%s → %j', (url, title) => {
    expect(purgedTitle(url, PATHS)).toBe(title);
  });

  it.each([
    'http://wiki/w/api.php?action=query',
    'http://wiki/w/load.php?modules=x',
    'http://wiki/w/images/deleted/x',
    'http://wiki/wiki/',
    'http://wiki/other',
  ])('%s names no page', (url) => {
    expect(purgedTitle(url, PATHS)).toBeUndefined();
  });
});

describe('changes', () => {
  it('a PURGE: the page only (no list: anyone can make the wiki send one; its subject or talk page has its own PURGE when it changes)', () => {
    expect(changeFromPurge('Talk:Foo bar').tags).toEqual(['p:Talk:Foo bar']);
    expect(changeFromPurge('User:Ann').tags).toEqual(['p:User:Ann']);
    expect(changeFromPurge('User:Ann', undefined, true).tags).toEqual(['p:User:Ann', 'p:User talk:Ann']);
    expect(changeFromPurge('Special:Version').tags).toEqual(['p:Special:Version']);
  });
  it('a purged page the wiki confirms changed: its namespace, its entity type, any list', () => {
    expect(changeConfirmed('Talk:Foo bar').tags).toEqual(['*', 'p:Talk:Foo bar', 'n:1']);
    expect(changeConfirmed('Item:Q42').tags).toEqual(['*', 'p:Item:Q42', 'n:0', 't:item', 'sl']);
    // Gone or back: still not its subject page's, which the wiki purges itself then.
    expect(changeConfirmed('Talk:Foo bar', undefined, false, undefined, true).tags).toEqual(['*', 'p:Talk:Foo bar', 'n:1']);
  });
  it('a move row: the old title, the target (and their talk pages), the page id', () => {
    const c = changeFromRow({
      type: 'log',
      ns: 0,
      title: 'LabA',
      pageid: 5,
      rcid: 40,
      timestamp: '2026-11-24T02:00:58Z',
      logtype: 'move',
      logaction: 'move',
      logparams: { target_ns: 0, target_title: 'LabA2', suppressredirect: false },
    });
    expect(c.tags).toEqual(['*', 'p:LabA', 'p:Talk:LabA', 'n:0', 'i:5', 'p:LabA2', 'p:Talk:LabA2']);
    expect(c.type).toBe('log/move');
    expect(c.at).toBe(Date.parse('2026-11-24T02:00:58Z'));
  });
  it('a rights or block row ends the user`s sessions', () => {
    const c = changeFromRow({ type: 'log', ns: 2, title: 'User:Lab User', rcid: 1, timestamp: '2026-11-24T00:00:00Z', logtype: 'rights', logaction: 'rights' });
    expect(c.users).toEqual(['Lab User']);
  });
  it('a row hidden from anonymous readers names nothing but any list', () => {
    expect(changeFromRow({ type: 'log', rcid: 1, timestamp: '2026-11-24T00:00:00Z', actionhidden: true }).tags).toEqual(['*']);
  });
});
