// What an answer depends on (src/policy/dependencies.ts), module by module.
import { describe, expect, it } from 'vitest';
import { modulesOf } from '../../src/policy/request.js';
import { answerJson, dependenciesOf, earliestExpiry, showsExpiries, updatedByJobs } from '../../src/policy/dependencies.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';

function deps(q: string, answer?: unknown, override?: 'pages' | 'any' | 'nothing') {
  const query = parsePhpQuery(q);
  return dependenciesOf({ query, modules: modulesOf(query), override, answer: () => answer });
}

describe('page modules depend on the pages the request names and, above all, the answer lists', () => {
  it('prop=revisions: normalized, redirects and pages (fv2), titles and ids', () => {
    const answer = {
      query: {
        normalized: [{ from: 'main_page', to: 'Main page' }],
        redirects: [{ from: 'Main page', to: 'Main Page' }],
        pages: [{ pageid: 1, ns: 0, title: 'Main Page', revisions: [] }],
      },
    };
    expect(deps('action=query&prop=revisions&titles=main_page&redirects=1&format=json&formatversion=2', answer)).toEqual({
      tags: ['p:Main page', 'p:Main Page', 'i:1'],
      clock: false,
    });
  });
  it('formatversion=1 pages are an object; a missing page still names its title', () => {
    const answer = { query: { pages: { '-1': { ns: 0, title: 'Nowhere', missing: '' }, '7': { pageid: 7, ns: 1, title: 'Talk:X' } } } };
    expect(deps('action=query&prop=info&titles=Nowhere|Talk:X&format=json', answer).tags.toSorted()).toEqual(['i:7', 'p:Nowhere', 'p:Talk:X']);
  });
  it('pageids and revids: the answer says which pages', () => {
    const answer = { query: { pages: [{ pageid: 5, ns: 0, title: 'Five' }] } };
    expect(deps('action=query&prop=revisions&revids=99&format=json&formatversion=2', answer).tags).toEqual(['p:Five', 'i:5']);
  });
  it('an answer that could not be read (xml, php, HTML): any change, besides the request`s titles', () => {
    expect(deps('action=query&prop=info&titles=Foo&format=xml', undefined).tags).toEqual(['*', 'p:Foo']);
  });
  it('parse of a page: the page, and the namespaces a rendering reads (templates, modules, messages)', () => {
    const answer = { parse: { title: 'Main Page', pageid: 1, text: {} } };
    expect(deps('action=parse&page=main_page&format=json', answer).tags.toSorted()).toEqual(
      ['i:1', 'n:10', 'n:8', 'n:828', 'p:Main Page', 'p:Main page'].sort(),
    );
  });
  it('compare: both sides', () => {
    const answer = { compare: { fromtitle: 'A', fromid: 1, totitle: 'B', toid: 2 } };
    expect(deps('action=compare&fromtitle=A&totitle=B&format=json', answer).tags.toSorted()).toEqual(['i:1', 'i:2', 'p:A', 'p:B']);
  });
  it('Wikibase entities: the entity`s page, from the ids (both spellings) and the answer', () => {
    const answer = { entities: { Q42: { id: 'Q42', title: 'Item:Q42', pageid: 10 } } };
    expect(deps('action=wbgetentities&ids=Q42&format=json', answer).tags.toSorted()).toEqual(['i:10', 'p:Item:Q42', 'p:Q42'].sort());
  });
});

describe('lists', () => {
  it.each([
    ['action=query&list=allpages', ['n:0']],
    ['action=query&list=allpages&apnamespace=10', ['n:10']],
    ['action=query&list=allpages&apnamespace=*', ['*']],
    ['action=query&generator=allpages&gapnamespace=4&prop=info', ['n:4']],
    ['action=query&list=allimages', ['n:6']],
    ['action=query&list=recentchanges', ['*']],
    ['action=query&list=logevents', ['*']],
    ['action=query&list=categorymembers&cmtitle=Category:X', ['*']],
    ['action=query&list=search&srsearch=x', ['*']],
    ['action=parse&text=hello', ['*']],
    ['action=expandtemplates&text={{x}}', ['*']],
    ['action=someextension', ['*']],
  ])('%s → %j', (q, tags) => {
    expect(deps(q, {}).tags).toEqual(tags);
  });
});

describe('configuration, interface messages and the clock', () => {
  it.each([
    // general's `mainpage` is the `mainpage` message (Title::newMainPage).
    ['action=query&meta=siteinfo', ['n:8'], true],
    ['action=query&meta=siteinfo&siprop=namespaces', [], false],
    ['action=query&meta=siteinfo&siprop=general|statistics', ['*'], true],
    ['action=paraminfo&modules=query', [], false],
    ['action=paraminfo&modules=query&helpformat=wikitext', ['n:8'], false],
    ['action=help', ['n:8'], false],
    ['action=wbavailablebadges', [], false],
    ['action=query&list=allpages&curtimestamp=1', ['n:0'], true],
  ])('%s → %j, clock %s', (q, tags, clock) => {
    expect(deps(q, {})).toEqual({ tags, clock });
  });
});

it('an operator`s rule overrides the table', () => {
  expect(deps('action=someextension', {}, 'nothing').tags).toEqual([]);
  expect(deps('action=query&meta=siteinfo&siprop=namespaces', {}, 'any').tags).toEqual(['*']);
});

describe('answerJson', () => {
  it('json and JSONP answers parse; others do not', () => {
    expect(answerJson(Buffer.from('{"a":1}'), 'application/json; charset=utf-8')).toEqual({ a: 1 });
    expect(answerJson(Buffer.from('/**/cb({"a":1})'), 'text/javascript; charset=utf-8')).toEqual({ a: 1 });
    expect(answerJson(Buffer.from('<api/>'), 'text/xml')).toBeUndefined();
    expect(answerJson(Buffer.from('{oops'), 'application/json')).toBeUndefined();
  });
});

describe('action=query itself answers about the pages the request names', () => {
  it('a bare action=query&titles= (a missing page, export, redirects): the pages, not nothing', () => {
    const answer = { query: { pages: { '-1': { ns: 0, title: 'NewB1', missing: '' } } } };
    expect(deps('action=query&titles=NewB1&format=json', answer).tags).toEqual(['p:NewB1']);
    expect(deps('action=query&titles=TA&export=1&format=json', { query: { pages: { '7': { pageid: 7, ns: 0, title: 'TA' } } } }).tags).toEqual(['p:TA', 'i:7']);
    expect(deps('action=query&pageids=7&format=json', { query: { pages: { '7': { pageid: 7, ns: 0, title: 'TA' } } } }).tags).toEqual(['i:7', 'p:TA']);
    expect(deps('action=query&format=json').tags).toEqual([]);
  });

  it('a list with titles: the titles too (the answer`s pages block is about them)', () => {
    const answer = { query: { pages: [{ ns: 2, title: 'User:X', missing: true }], allpages: [] } };
    expect(deps('action=query&list=allpages&titles=User:X&format=json&formatversion=2', answer).tags).toEqual(['n:0', 'p:User:X']);
  });

  it('revids the wiki does not have (badrevids), or a page without title or id: any change', () => {
    const answer = { query: { badrevids: { '30': { revid: 30, missing: '' } } } };
    expect(deps('action=query&revids=30&prop=revisions&format=json', answer).tags).toContain('*');
    expect(deps('action=query&revids=30&prop=revisions&format=json', { query: { pages: [{ missing: true }] } }).tags).toContain('*');
  });

  it('allredirects depends on any change: its namespace is the targets`, a change names the redirect`s', () => {
    expect(deps('action=query&list=allredirects&arnamespace=2&format=json').tags).toEqual(['*']);
  });
});

describe('what MediaWiki`s jobs update without a change signal (updatedByJobs): the short TTL defaults', () => {
  const jobs = (q: string) => {
    const query = parsePhpQuery(q);
    return updatedByJobs(modulesOf(query), query);
  };
  it('the links tables and a parse of a stored page', () => {
    expect(jobs('action=query&prop=categories&titles=P3')).toBe(true);
    expect(jobs('action=query&list=categorymembers&cmtitle=Category:K3')).toBe(true);
    expect(jobs('action=query&prop=info|templates&titles=P3')).toBe(true);
    expect(jobs('action=parse&page=P3')).toBe(true);
    expect(jobs('action=parse&oldid=40')).toBe(true);
  });
  it('not what a change names (revisions, info, allpages) nor a parse of given text', () => {
    expect(jobs('action=query&prop=revisions|info&titles=P3')).toBe(false);
    expect(jobs('action=query&list=allpages')).toBe(false);
    expect(jobs('action=parse&text={{C3}}&contentmodel=wikitext')).toBe(false);
  });
});

describe('what no change signal names', () => {
  it('a page id the wiki does not have (missing, no title): any change (its creation or undeletion names a title)', () => {
    const answer = { query: { pages: [{ pageid: 8, missing: true }] } };
    expect(deps('action=query&prop=info&pageids=8&format=json&formatversion=2', answer).tags).toEqual(['*', 'i:8']);
  });
  it.each([
    ['prop=info&inprop=protection (a cascading protection of another page sets it)', 'action=query&prop=info&inprop=protection&titles=Template:T'],
    ['prop=info&intestactions (protections, blocks and rights decide it)', 'action=query&prop=info&intestactions=edit&titles=T'],
    ['list=allpages by protection type', 'action=query&list=allpages&apprtype=edit&apnamespace=10'],
    ['siteinfo`s members per group (a rights change alters them)', 'action=query&meta=siteinfo&siprop=usergroups&sinumberingroup=1'],
  ])('%s: any change', (_what, q) => {
    expect(deps(`${q}&format=json`, { query: { pages: [{ pageid: 1, ns: 10, title: 'Template:T' }] } }).tags).toContain('*');
  });
  it('siteinfo`s groups without their counts stay configuration', () => {
    expect(deps('action=query&meta=siteinfo&siprop=usergroups&format=json', {}).tags).toEqual([]);
  });
  it('prop=revisions rendered or expanded: the namespaces a rendering reads; plain content not', () => {
    const answer = { query: { pages: [{ pageid: 3, ns: 0, title: 'G' }] } };
    for (const p of ['rvparse=1', 'rvexpandtemplates=1'])
      expect(deps(`action=query&prop=revisions&rvprop=content&${p}&titles=G&format=json`, answer).tags).toEqual(
        expect.arrayContaining(['n:10', 'n:828', 'n:8']),
      );
    expect(deps('action=query&prop=revisions&rvprop=content&titles=G&format=json', answer).tags).not.toContain('n:10');
  });
  it('an answer showing protections or blocks is kept no longer than the earliest expiry still to come', () => {
    const now = Date.parse('2026-11-27T12:00:00Z');
    const query = parsePhpQuery('action=query&prop=info&inprop=protection&titles=A|B&format=json');
    const answer = {
      query: {
        pages: [
          {
            pageid: 1,
            title: 'A',
            protection: [
              { type: 'edit', level: 'sysop', expiry: 'infinity' },
              { type: 'move', level: 'sysop', expiry: '2026-11-27T12:10:00Z' },
            ],
          },
          { pageid: 2, title: 'B', protection: [{ type: 'edit', level: 'sysop', expiry: '2026-11-27T11:00:00Z' }] },
        ],
      },
    };
    // At the end of the expiry's second: MediaWiki still applies it during that second.
    expect(dependenciesOf({ query, modules: modulesOf(query), override: undefined, answer: () => answer, now }).expiresAt).toBe(
      Date.parse('2026-11-27T12:10:01Z'),
    );
    expect(earliestExpiry({ query: { users: [{ name: 'X', blockexpiry: '2026-11-27T12:00:30Z' }] } }, now)).toBe(now + 31_000);
    // An expiry in the current second still counts (the helper's sweep: userinfo showed a block
    // that ended in that second for the whole session TTL).
    expect(earliestExpiry({ query: { userinfo: { blockexpiry: '2026-11-27T12:00:00Z' } } }, now + 300)).toBe(now + 1_000);
    expect(earliestExpiry({ query: { users: [{ name: 'X', blockexpiry: 'infinite' }] } }, now)).toBeUndefined();
    expect(showsExpiries(['query', 'users'], parsePhpQuery('usprop=blockinfo'))).toBe(true);
    expect(showsExpiries(['query', 'users'], parsePhpQuery('usprop=groups'))).toBe(false);
    expect(showsExpiries(['query', 'blocks'], parsePhpQuery(''))).toBe(true);
  });
});
