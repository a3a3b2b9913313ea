// WIKIEDGE_MODULES' names against the modules the wiki lists in its paraminfo (every action, and
// query's prop/list/meta/generator submodules): the names it does not know are warned about,
// with a hint for the metrics' `query+<name>` label.
import { describe, expect, it } from 'vitest';
import { knownModuleNames, PARAMINFO_QUERY, unknownModuleNames } from '../../src/upstream/module-names.js';

/** The shape of MediaWiki 1.39's answer to action=paraminfo&modules=main|query&formatversion=2, cut down. */
const paraminfo = {
  paraminfo: {
    modules: [
      {
        name: 'main',
        path: 'main',
        parameters: [
          { name: 'action', type: ['block', 'parse', 'query', 'wbavailablebadges'], submodules: {} },
          { name: 'format', type: ['json', 'xml'] },
          { name: 'maxlag', type: 'integer' },
        ],
      },
      {
        name: 'query',
        path: 'query',
        parameters: [
          { name: 'prop', type: ['info', 'revisions'] },
          { name: 'list', type: ['allpages', 'filearchive'] },
          { name: 'meta', type: ['siteinfo', 'tokens'] },
          { name: 'generator', type: ['allpages', 'revisions'] },
          { name: 'exportschema', type: ['0.10', '0.11'] },
        ],
      },
    ],
  },
};

describe('module names from the wiki’s paraminfo', () => {
  it('asks for main and query, in formatversion 2', () => {
    expect(new URLSearchParams(PARAMINFO_QUERY).get('modules')).toBe('main|query');
    expect(new URLSearchParams(PARAMINFO_QUERY).get('formatversion')).toBe('2');
  });

  it('knows every action and query submodule, not formats or other choices', () => {
    expect([...knownModuleNames(paraminfo)!].sort()).toEqual(
      ['allpages', 'block', 'filearchive', 'info', 'parse', 'query', 'revisions', 'siteinfo', 'tokens', 'wbavailablebadges'].sort(),
    );
  });

  it('an answer without modules (an error, another shape) knows nothing', () => {
    expect(knownModuleNames({ error: { code: 'badvalue' } })).toBeUndefined();
    expect(knownModuleNames(null)).toBeUndefined();
  });

  it('names the unknown ones, with a hint for a query+ label', () => {
    const known = knownModuleNames(paraminfo)!;
    expect(unknownModuleNames(['parse', 'filearchive', 'query+siteinfo', 'wbgetentities', 'query+nothing'], known)).toEqual([
      'query+siteinfo (did you mean siteinfo?)',
      'wbgetentities',
      'query+nothing',
    ]);
  });
});
