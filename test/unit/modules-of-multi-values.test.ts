// The modules a request runs (policy/request.ts modulesOf) read list/prop/meta as
// ApiBase::explodeMultiValue() does: split on U+001F when the value starts with it, else on `|`,
// empty names dropped; a single name is itself.
import { describe, expect, it } from 'vitest';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';
import { modulesOf } from '../../src/policy/request.js';

describe('modulesOf and multi-values', () => {
  it.each([
    ['meta=siteinfo', ['query', 'siteinfo']],
    ['meta=', ['query']],
    ['meta=|', ['query']],
    ['meta=siteinfo|userinfo', ['query', 'siteinfo', 'userinfo']],
    ['meta=siteinfo||userinfo|', ['query', 'siteinfo', 'userinfo']],
    ['meta=%1Fsiteinfo%1Fuserinfo', ['query', 'siteinfo', 'userinfo']],
    ['meta=%1F', ['query']],
    ['meta=%1Fa|b', ['query', 'a|b']],
    ['meta=a%1Fb', ['query', 'a\x1fb']],
    ['list=allpages&prop=info|revisions&meta=tokens&generator=search', ['query', 'search', 'allpages', 'info', 'revisions', 'tokens']],
  ])('action=query&%s → %j', (q, modules) => {
    expect(modulesOf(parsePhpQuery(`action=query&${q}`))).toEqual(modules);
  });
});
