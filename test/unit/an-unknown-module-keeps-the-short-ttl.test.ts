// The follower vouches for what recentchanges rows and PURGEs name. A module the table does not
// know (an extension's) may read what jobs or another service keep (Wikibase Client's
// prop=wbentityusage reads wbc_entity_usage, which AddUsagesForPageJob writes on a page view's
// parse; pageviews, abuselog, a suggester): depending on any change was not enough, it kept the
// followed TTL and outlived what it read by an hour. It keeps the short TTL defaults now
// (policy/dependencies.ts changesAreSignalled).
import { describe, expect, it } from 'vitest';
import { changesAreSignalled } from '../../src/policy/dependencies.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';
import { modulesOf } from '../../src/policy/request.js';
import { KNOWN_MODULE_NAMES, WIKIBASE_MODULE_NAMES } from '../../src/mediawiki/modules.js';

const signalled = (q: string) => {
  const query = parsePhpQuery(q);
  return changesAreSignalled(modulesOf(query), query);
};

describe('an answer of a module the table does not know', () => {
  it.each([
    'action=query&prop=pageviews&titles=Berlin',
    'action=query&prop=info|someextensionprop&titles=Berlin',
    'action=query&list=abuselog',
    'action=query&meta=someextensionmeta',
    'action=wbsgetsuggestions&entity=Q1',
    'action=someextensionaction',
  ])('%s: the short TTL, whatever the follower', (q) => {
    expect(signalled(q)).toBe(false);
  });

  it('one the operator says the dependencies of (WIKIEDGE_MODULES dependsOn): the followed TTL, as the operator vouches', () => {
    const query = parsePhpQuery('action=query&prop=pageviews&titles=Berlin');
    expect(changesAreSignalled(modulesOf(query), query, true)).toBe(true);
  });

  it('prop=wbentityusage (Wikibase Client) is known: a Wikibase module updated by jobs', () => {
    expect(KNOWN_MODULE_NAMES).toContain('wbentityusage');
    expect(WIKIBASE_MODULE_NAMES).toContain('query+wbentityusage');
    expect(signalled('action=query&prop=wbentityusage&titles=Berlin')).toBe(false);
  });

  it.each(['action=query&prop=info|revisions&titles=Berlin', 'action=wbgetentities&ids=Q1', 'action=query&meta=siteinfo', 'action=query&titles=Berlin'])(
    '%s: known modules the follower sees the changes of keep the followed TTL',
    (q) => {
      expect(signalled(q)).toBe(true);
    },
  );
});
