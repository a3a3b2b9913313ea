// The change follower's long TTL defaults (WIKIEDGE_TTL_FOLLOWED_SECONDS, 1 h) are for answers
// whose every change a recentchanges row announces. Configuration-class answers got them whatever
// they read: siteinfo's interwikimap (Special:Interwiki logs under its own title, so only a `*`
// row follows it), statistics (every edit, and the job queue's length with no row at all),
// dbrepllag (live), help text (MediaWiki: messages). Each now depends on what changes it or, when
// no row says it changed, keeps the short TTL defaults (src/mediawiki/modules.ts SITEINFO_PROPS,
// `live`; src/policy/dependencies.ts changesAreSignalled, read by src/steps/flow.ts).
import { describe, expect, it } from 'vitest';
import { modulesOf } from '../../src/policy/request.js';
import { changesAreSignalled, dependenciesOf } from '../../src/policy/dependencies.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';

function of(q: string) {
  const query = parsePhpQuery(`${q}&format=json`);
  const modules = modulesOf(query);
  return {
    tags: dependenciesOf({ query, modules, override: undefined, answer: () => ({}) }).tags,
    followed: changesAreSignalled(modules, query),
  };
}

describe('siteinfo, prop by prop (ApiQuerySiteinfo)', () => {
  it.each([
    // What a row announces: any change.
    ['interwikimap', ['*'], true],
    // What changes with no row: the short TTL, whatever it depends on.
    ['statistics', ['*'], false],
    ['dbrepllag', [], false],
    ['usergroups&sinumberingroup=1', ['*'], false],
    // Interface messages: an edit in the MediaWiki namespace.
    ['skins', ['n:8'], true],
    ['general', ['n:8'], true],
    // Configuration and code: the TTL alone.
    ['namespaces|namespacealiases|magicwords|extensions|rightsinfo|restrictions|fileextensions', [], true],
    ['usergroups', [], true],
    // A prop the table does not know: any change, as an unknown module.
    ['somethingnew', ['*'], true],
  ])('siprop=%s → %j, followed %s', (siprop, tags, followed) => {
    expect(of(`action=query&meta=siteinfo&siprop=${siprop}`)).toEqual({ tags, followed });
  });

  it('the liveliest prop decides: one live prop among configuration keeps the short TTL', () => {
    expect(of('action=query&meta=siteinfo&siprop=namespaces|dbrepllag').followed).toBe(false);
    expect(of('action=query&meta=siteinfo&siprop=namespaces|interwikimap').tags).toEqual(['*']);
  });
});

describe('other modules that were configuration alone', () => {
  it('help text is interface messages; paraminfo`s too when it prints them', () => {
    expect(of('action=help&modules=query').tags).toEqual(['n:8']);
    expect(of('action=paraminfo&modules=query&helpformat=html').tags).toEqual(['n:8']);
    expect(of('action=paraminfo&modules=query').tags).toEqual([]);
  });

  it('wbparsevalue&validate: an entity datatype depends on the entities named; a remote repository`s is live', () => {
    expect(of('action=wbparsevalue&datatype=wikibase-item&values=Q99&validate=1')).toEqual({ tags: ['p:Item:Q99', 'p:Q99'], followed: true });
    expect(of('action=wbparsevalue&datatype=wikibase-item&values=not-an-id&validate=1').tags).toContain('*');
    expect(of('action=wbparsevalue&datatype=commonsMedia&values=Foo.jpg&validate=1')).toEqual({ tags: [], followed: false });
    expect(of('action=wbparsevalue&datatype=wikibase-item&values=Q99')).toEqual({ tags: [], followed: true });
  });

  it('Wikibase`s subscriptions and entity usages: written by client wikis` links updates and jobs, with no row here', () => {
    expect(of('action=query&list=wbsubscribers&wblsentities=Q1').followed).toBe(false);
    expect(of('action=query&list=wblistentityusages&wbleuentities=Q1').followed).toBe(false);
  });
});
