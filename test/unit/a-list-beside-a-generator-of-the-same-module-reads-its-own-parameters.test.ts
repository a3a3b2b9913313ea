// ApiQuery runs a generator and a list or prop of the same name as two modules, each with its own
// parameters (the generator's take a `g`: ApiQueryGeneratorBase::encodeParamName). The dependency
// reader took every module of the generator's name for the generator: with
// `generator=wbsearch&gwbstype=item&list=wbsearch&wbstype=property` the list's property search was
// tagged `t:item` only, and a property's new label never reached the cached answer (kept for the
// followed TTL); `generator=allpages&gapnamespace=0&list=allpages&apnamespace=4` was tagged `n:0`
// only, and a new Project: page never reached it.
import { describe, expect, it } from 'vitest';
import { modulesOf } from '../../src/policy/request.js';
import { dependenciesOf } from '../../src/policy/dependencies.js';
import { changeFromRow } from '../../src/policy/changes.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';
import { namespacesFromSiteinfo } from '../../src/mediawiki/titles.js';

const ns = namespacesFromSiteinfo({
  namespaces: {
    '0': { id: 0, name: '' },
    '4': { id: 4, name: 'Project', canonical: 'Project' },
    '120': { id: 120, name: 'Item', canonical: 'Item', defaultcontentmodel: 'wikibase-item' },
    '122': { id: 122, name: 'Property', canonical: 'Property', defaultcontentmodel: 'wikibase-property' },
  },
});

function deps(q: string) {
  const query = parsePhpQuery(`${q}&format=json`);
  return dependenciesOf({ query, modules: modulesOf(query), override: undefined, answer: () => ({}), namespaces: ns }).tags;
}

const reaches = (change: readonly string[], answer: readonly string[]) => answer.some((t) => change.includes(t));

describe('a list beside a generator of the same module', () => {
  it('wbsearch: each search depends on its own entity type', () => {
    const tags = deps('action=query&generator=wbsearch&gwbssearch=x&gwbstype=item&list=wbsearch&wbssearch=Ein&wbstype=property');
    expect(tags).toContain('t:item');
    expect(tags).toContain('t:property');
    const propertyLabel = changeFromRow({ type: 'edit', ns: 122, title: 'Property:P7', pageid: 9, rcid: 3, timestamp: '2026-11-29T09:00:00Z' }, ns).tags;
    expect(reaches(propertyLabel, tags)).toBe(true);
  });

  it('allpages: each list depends on its own namespace', () => {
    const tags = deps('action=query&generator=allpages&gapnamespace=0&list=allpages&apnamespace=4');
    expect(tags).toContain('n:0');
    expect(tags).toContain('n:4');
    const projectPage = changeFromRow({ type: 'new', ns: 4, title: 'Project:Rules', pageid: 12, rcid: 4, timestamp: '2026-11-29T09:00:00Z' }, ns).tags;
    expect(reaches(projectPage, tags)).toBe(true);
  });

  it('a generator alone still reads its g-parameters', () => {
    expect(deps('action=query&generator=allpages&gapnamespace=4')).toContain('n:4');
    expect(deps('action=query&generator=allpages&gapnamespace=4')).not.toContain('n:0');
    expect(deps('action=query&generator=wbsearch&gwbssearch=x&gwbstype=property')).toContain('t:property');
  });
});
