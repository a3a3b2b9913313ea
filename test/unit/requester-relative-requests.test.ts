// Which requests make MediaWiki 1.39 answer relative to the requester while calling the answer
// public: a pre-save transform of supplied text as the current user (class 52, never shared
// anonymously: mediawiki/requester-address.ts echoesRequester) and a feed filtered by the current
// user (class 53, passed: mediawiki/modules.ts filtersByRequester).
import { describe, expect, it } from 'vitest';
import { echoesRequester } from '../../src/mediawiki/requester-address.js';
import { filtersByRequester } from '../../src/mediawiki/modules.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';
import { modulesOf } from '../../src/policy/request.js';

describe('echoesRequester: the modules of ApiQueryRevisionsBase pre-save-transform `difftotext` as the current user', () => {
  it.each([
    ['action=query&prop=revisions&titles=A&rvdifftotext=~~~&rvdifftotextpst=1', true],
    ['action=query&prop=deletedrevisions&titles=A&drvdifftotext=~~~&drvdifftotextpst=1', true],
    ['action=query&list=allrevisions&arvdifftotext=~~~&arvdifftotextpst=1', true],
    ['action=query&list=alldeletedrevisions&adrdifftotext=~~~&adrdifftotextpst=1', true],
    ['action=query&generator=revisions&titles=A&grvdifftotext=~~~&grvdifftotextpst=1', true],
    ['action=query&generator=allrevisions&garvdifftotext=~~~&garvdifftotextpst=1', true],
    ['action=query&generator=deletedrevisions&titles=A&gdrvdifftotextpst=1', true],
    ['action=query&generator=alldeletedrevisions&gadrdifftotextpst=1', true],
    // A boolean API parameter is true when present (PresenceBooleanDef).
    ['action=query&prop=revisions&titles=A&rvdifftotext=~~~&rvdifftotextpst=0', true],
    ['action=query&prop=revisions&titles=A&rvdifftotext=~~~&rvdifftotextpst=', true],
    // Modules named in any spelling ApiQuery reads (several, U+001F-separated): the parameter decides.
    ['action=query&prop=info%7Crevisions&titles=A&rvdifftotext=~~~&rvdifftotextpst=1', true],
    ['action=query&prop=%1Finfo%1Frevisions&titles=A&rvdifftotext=~~~&rvdifftotextpst=1', true],
    // Without the transform the supplied text is diffed as sent: no one's name.
    ['action=query&prop=revisions&titles=A&rvdifftotext=~~~', false],
    ['action=query&prop=revisions&titles=A&rvprop=content', false],
    // Outside action=query no query module runs.
    ['action=parse&page=A&rvdifftotextpst=1', false],
  ])('%s → %s', (q, expected) => {
    expect(echoesRequester(parsePhpQuery(q))).toBe(expected);
  });
});

describe('filtersByRequester: answers filtered relative to the current user', () => {
  const filtered = (q: string) => {
    const query = parsePhpQuery(q);
    return filtersByRequester(modulesOf(query), query);
  };
  it.each([
    ['action=feedrecentchanges&hidemyself=1', true],
    ['action=feedrecentchanges&hidemyself=0', true],
    ['action=feedrecentchanges&hidemyself=', true],
    ['action=feedrecentchanges&feedformat=atom', false],
    // Not a parameter of ApiFeedRecentChanges: the special page never sees it.
    ['action=feedrecentchanges&hidebyothers=1', false],
    // list=recentchanges has no filter by the current user (rcuser/rcexcludeuser name a user).
    ['action=query&list=recentchanges&hidemyself=1', false],
  ])('%s → %s', (q, expected) => {
    expect(filtered(q)).toBe(expected);
  });
});
