// wbgetentities by `sites` and `titles` with `normalize`: a title the repository does not find
// directly is normalized by the client wiki over HTTP, following that wiki's redirects (Wikibase
// REL1_39 repo/includes/Api/EntityByTitleHelper.php getEntityId → normalizeTitle →
// Site::normalizePageName). A redirect retargeted there leaves no recentchanges row here, so such an
// answer keeps the short TTL defaults whatever the follower (src/mediawiki/wikibase-params.ts
// normalizesAtAClient, `live` in modules.ts); without `normalize` the lookup is the repository's own and stays followed.
import { describe, expect, it } from 'vitest';
import { modulesOf } from '../../src/policy/request.js';
import { changesAreSignalled } from '../../src/policy/dependencies.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';

const followed = (q: string) => {
  const query = parsePhpQuery(`action=wbgetentities&format=json&${q}`);
  return changesAreSignalled(modulesOf(query), query);
};

describe('wbgetentities by site and title', () => {
  it('with normalize: not followed (the client wiki decides)', () => {
    expect(followed('sites=enwiki&titles=Berlin&normalize=1')).toBe(false);
    expect(followed('sites=enwiki&titles=Berlin&normalize=')).toBe(false);
  });
  it('without normalize, or by ids: followed', () => {
    expect(followed('sites=enwiki&titles=Berlin')).toBe(true);
    expect(followed('ids=Q1&normalize=1')).toBe(true);
  });
});
