// A MediaInfo id (WikibaseMediaInfo, Commons' structured data: `M123`) names the entity kept in
// the `mediainfo` slot of the page whose id is 123, a File: page (MediaInfoHandler::getTitleForId:
// Title::newFromID of the numeric part; getIdForTitle: 'M' . the page's id). The id was read as
// naming no page, so `wbgetentities&ids=M123` depended on `*` and went with every edit of the wiki.
// It now depends on `i:123`, the page-id tag every recentchanges row of that page carries
// (src/mediawiki/entities.ts entityPageId, src/policy/dependencies.ts, src/policy/changes.ts).
import { describe, expect, it } from 'vitest';
import { modulesOf } from '../../src/policy/request.js';
import { dependenciesOf } from '../../src/policy/dependencies.js';
import { changeFromRow, changeFromWrite } from '../../src/policy/changes.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';

function deps(q: string, answer: unknown) {
  const query = parsePhpQuery(q);
  return dependenciesOf({ query, modules: modulesOf(query), override: undefined, answer: () => answer }).tags;
}
const reaches = (change: readonly string[], answer: readonly string[]) => answer.some((t) => change.includes(t));

const fileEdit = changeFromRow({ type: 'edit', ns: 6, title: 'File:Sunset.jpg', pageid: 123, rcid: 5, timestamp: '2026-11-29T09:00:00Z' }).tags;
const otherEdit = changeFromRow({ type: 'edit', ns: 0, title: 'Berlin', pageid: 7, rcid: 6, timestamp: '2026-11-29T09:00:00Z' }).tags;

describe('MediaInfo ids name their page by id', () => {
  it('wbgetentities&ids=M123 depends on page 123 (and the title its answer gives), not on any change', () => {
    const answer = { entities: { M123: { type: 'mediainfo', id: 'M123', pageid: 123, ns: 6, title: 'File:Sunset.jpg', labels: {} } }, success: 1 };
    const tags = deps('action=wbgetentities&ids=M123&format=json', answer);
    expect(tags).not.toContain('*');
    expect(tags).toEqual(expect.arrayContaining(['i:123', 'p:File:Sunset.jpg']));
    expect(reaches(fileEdit, tags)).toBe(true);
    expect(reaches(otherEdit, tags)).toBe(false);
  });

  it('a MediaInfo the page does not have yet (`missing`) waits for that page`s first edit of it; lower case is read as Wikibase reads it', () => {
    const tags = deps('action=wbgetentities&ids=m123&format=json', { entities: { M123: { id: 'M123', missing: '' } }, success: 1 });
    expect(tags).toEqual(['i:123']);
  });

  it('wbformatentities and wbgetclaims of an M id: its page id, in any format', () => {
    expect(deps('action=wbformatentities&ids=M123&format=xml', undefined).toSorted()).toEqual(['i:123', 'n:8']);
    expect(deps('action=wbgetclaims&entity=M123&format=json', { claims: {} })).toEqual(['i:123']);
  });

  it('a write of M123 through the gateway names page 123, and not every entity type`s searches', () => {
    const write = changeFromWrite('wbsetlabel', (n) => ({ id: 'M123', language: 'en', value: 'Sunset' })[n], undefined, {
      success: 1,
      entity: { id: 'M123', type: 'mediainfo', lastrevid: 9 },
    })!;
    expect(write.tags).toContain('i:123');
    expect(write.tags).not.toContain('t:item');
  });
});

describe('a File: page deleted, known only by the wiki`s PURGE', () => {
  it('confirmed gone, it ends the MediaInfo answers of the id the page had when last seen', async () => {
    const { PurgeConfirmations } = await import('../../src/invalidation/purge-confirmation.js');
    const { changeConfirmed } = await import('../../src/policy/changes.js');
    const pino = (await import('pino')).default;
    const NOW = Date.parse('2026-11-29T09:00:00Z');
    let gone = false;
    const applied: string[][] = [];
    const c = new PurgeConfirmations({
      // What prop=info|revisions says: its id while it exists; `missing` and no id once deleted.
      ask: async (titles) => ({
        pages: titles.map((title) => (gone ? { title, missing: true } : { title, missing: false, revid: 40, revisionAt: NOW - 2_000, pageid: 123 })),
        now: NOW,
      }),
      confirmed: (title, onlyStatements, pageId) => changeConfirmed(title, undefined, onlyStatements, pageId),
      apply: async (changes) => void applied.push(...changes.map((ch) => [...ch.tags])),
      log: pino({ level: 'silent' }),
    });
    // An edit of the file's structured data, then its deletion: each reaches the gateway as a PURGE.
    c.note('File:Sunset.jpg');
    await c.settled();
    gone = true;
    c.note('File:Sunset.jpg');
    await c.settled();
    expect(applied).toHaveLength(2);
    expect(applied[1]).toEqual(expect.arrayContaining(['i:123', 'p:File:Sunset.jpg']));
  });
});
