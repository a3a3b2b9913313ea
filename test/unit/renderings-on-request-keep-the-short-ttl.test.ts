// Renderings the wiki makes on request read what no change names: `rvparse` and
// `rvexpandtemplates` run the parser (parser functions, a repository's own client reading
// entities), and a diff of an entity's content prints the labels of the entities its statements
// name (Wikibase's EntityDiffVisualizer), while a label's edit sends a PURGE and a recentchanges
// row of that entity's page alone. prop=revisions with `rvparse` of `Item:Q1` and action=compare
// of two of its revisions kept the followed TTL (an hour) after Q2, a value of Q1's statement,
// was relabelled; action=parse of a page already kept the short one. They keep the short TTL
// defaults now (mediawiki/modules.ts rendersOnRequest, policy/dependencies.ts diffsEntityContent).
// So do summaries rendered with their links (`parsedcomment`: a red link turns blue at the linked
// page's creation, whose change names that page alone) in answers of named pages or a namespace.
import { describe, expect, it } from 'vitest';
import { changesAreSignalled, diffsEntityContent } from '../../src/policy/dependencies.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';
import { modulesOf } from '../../src/policy/request.js';
import { DEFAULT_NAMESPACES, namespacesFromSiteinfo } from '../../src/mediawiki/titles.js';

const repository = namespacesFromSiteinfo({
  namespaces: {
    '0': { id: 0, name: '' },
    '6': { id: 6, name: 'File', canonical: 'File' },
    '120': { id: 120, name: 'Item', canonical: 'Item', defaultcontentmodel: 'wikibase-item' },
    '122': { id: 122, name: 'Property', canonical: 'Property', defaultcontentmodel: 'wikibase-property' },
  },
});
const facts = (q: string) => {
  const query = parsePhpQuery(q);
  return { modules: modulesOf(query), query };
};
const signalled = (q: string) => {
  const { modules, query } = facts(q);
  return changesAreSignalled(modules, query);
};
const diffsEntities = (q: string, answer: unknown, namespaces = repository) => {
  const { modules, query } = facts(q);
  return diffsEntityContent(modules, query, () => answer, namespaces);
};

describe('revisions rendered on request', () => {
  it.each([
    'action=query&prop=revisions&titles=Item:Q1&rvprop=content&rvparse=1',
    'action=query&prop=revisions&titles=Main_Page&rvprop=content&rvexpandtemplates=1',
    'action=query&prop=revisions&titles=Item:Q1&rvdiffto=prev',
    'action=query&prop=revisions&titles=Item:Q1&rvdifftotext=x',
    'action=query&prop=deletedrevisions&titles=Item:Q1&drvprop=content&drvparse=1',
    'action=query&list=allrevisions&arvprop=content&arvparse=1',
    'action=query&list=alldeletedrevisions&adrprop=content&adrdiffto=prev',
    'action=query&generator=allrevisions&garvprop=content&garvparse=1&prop=info',
  ])('%s: the short TTL', (q) => {
    expect(signalled(q)).toBe(false);
  });
  it('the content as stored keeps the followed TTL', () => {
    expect(signalled('action=query&prop=revisions&titles=Item:Q1&rvprop=content|ids')).toBe(true);
  });
});

describe('summaries rendered with their links (`parsedcomment`), whose class says whether the page exists', () => {
  it.each([
    'action=query&prop=revisions&titles=Main_Page&rvprop=ids|parsedcomment',
    'action=query&prop=imageinfo&titles=File:A.png&iiprop=parsedcomment',
    'action=query&list=allimages&aiprop=parsedcomment',
    'action=compare&fromrev=1&torev=2&prop=parsedcomment|ids',
  ])('%s: the short TTL', (q) => {
    expect(signalled(q)).toBe(false);
  });
  it.each([
    'action=query&prop=revisions&titles=Main_Page&rvprop=ids|comment',
    'action=query&prop=imageinfo&titles=File:A.png&iiprop=comment|url',
    'action=query&list=allimages&aiprop=comment',
    'action=compare&fromrev=1&torev=2&prop=comment|ids',
  ])('%s (the summary as written): the followed TTL', (q) => {
    expect(signalled(q)).toBe(true);
  });
});

describe('action=compare', () => {
  const q = 'action=compare&fromrev=1&torev=2';
  it('a diff of two entity revisions: the short TTL', () => {
    expect(diffsEntities(q, { compare: { fromns: 120, tons: 120, body: '<tr>…</tr>' } })).toBe(true);
    expect(diffsEntities(q, { compare: { fromns: 0, tons: 122 } })).toBe(true);
  });
  it('of File: pages (a MediaInfo slot), of supplied text, or sides the answer does not show: the short TTL', () => {
    expect(diffsEntities(q, { compare: { fromns: 6, tons: 6 } })).toBe(true);
    expect(diffsEntities('action=compare&fromtext=x&fromcontentmodel=wikibase-item&torev=2', { compare: { tons: 120 } })).toBe(true);
    expect(diffsEntities(`${q}&prop=diff|ids`, { compare: { fromrevid: 1, torevid: 2 } })).toBe(true);
    expect(diffsEntities(q, undefined)).toBe(true);
    // The diff's length is the rendered diff's.
    expect(diffsEntities(`${q}&prop=diffsize|ids|title`, { compare: { fromns: 120, tons: 120 } })).toBe(true);
    expect(diffsEntities(q, { error: { code: 'nosuchrevid' } })).toBe(true);
  });
  it('before the layout is learned: the short TTL', () => {
    expect(diffsEntities(q, { compare: { fromns: 0, tons: 0 } }, DEFAULT_NAMESPACES)).toBe(true);
  });
  it('a diff of wikitext pages, or no diff at all: the followed TTL', () => {
    expect(diffsEntities(q, { compare: { fromns: 0, tons: 0 } })).toBe(false);
    expect(diffsEntities(`${q}&prop=ids|title`, { compare: { fromns: 120, tons: 120 } })).toBe(false);
  });
  it('other modules are not asked', () => {
    expect(diffsEntities('action=query&prop=revisions&titles=Item:Q1', undefined)).toBe(false);
  });
});

describe('what a job or a rendering of messages changes, no change names', () => {
  it.each([
    'action=query&prop=info&titles=A&inprop=displaytitle',
    'action=query&prop=info&titles=A&inprop=varianttitles',
    'action=query&meta=allmessages&ammessages=mainpage&amenableparser=1',
    'action=help&modules=query',
    'action=paraminfo&modules=query&helpformat=html',
    'action=paraminfo&modules=query&helpformat=wikitext',
  ])('%s: the short TTL', (q) => {
    expect(signalled(q)).toBe(false);
  });
  it.each([
    'action=query&prop=info&titles=A&inprop=url|talkid',
    'action=query&meta=allmessages&ammessages=mainpage',
    'action=paraminfo&modules=query',
    'action=paraminfo&modules=query&helpformat=none',
  ])('%s: the followed TTL', (q) => {
    expect(signalled(q)).toBe(true);
  });
});
