// A property's page the confirmer once saw missing, then saw exist, was taken for a property
// restored: its datatype back (dependencies.ts DATATYPES), every entity answer showing a
// statement ended, wiki-wide. Anyone could arrange the first sight: an anonymous
// `index.php?title=Property:P10&action=purge` of the next id makes the wiki send a PURGE of a page
// that does not exist (PurgeAction::onSubmit), and a lagging replica answering the confirmation
// of a creation's own PURGE did it without anyone. The property's creation then emptied the
// cache of statements. A page whose newest revision is its first, made within the window, was
// created (invalidation/purge-confirmation.ts createdWithin): no statement shows a property
// that never existed, as no `new` row of the follower's carries a datatype change. A page
// restored, its first revision old, still brings its datatype back, when the deletion log names
// it: a property created before the window on a gateway of several processes (its creation's
// PURGE reached another one) was taken for restored by each process that had seen it missing,
// at the first anonymous purge of it there (docs/SECURITY.md class 65).
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { ChangeSignals } from '../../src/invalidation/signals.js';
import { PurgeConfirmations, type PageNow } from '../../src/invalidation/purge-confirmation.js';
import { changeConfirmed, changeFromPurge } from '../../src/policy/changes.js';
import { DATATYPES } from '../../src/policy/dependencies.js';
import type { PurgeMessage } from '../../src/cache/purge.js';
import { namespacesFromSiteinfo } from '../../src/mediawiki/titles.js';

const NOW = Date.parse('2026-11-30T06:00:00Z');
const TTL = { ttlPublicSeconds: 60, ttlSessionSeconds: 10 };
const ns = namespacesFromSiteinfo({
  namespaces: {
    '0': { id: 0, name: '' },
    '120': { id: 120, name: 'Item', canonical: 'Item', defaultcontentmodel: 'wikibase-item' },
    '122': { id: 122, name: 'Property', canonical: 'Property', defaultcontentmodel: 'wikibase-property' },
  },
});
const TITLE = 'Property:P10';

/** The confirmer over a wiki whose answer about P10 is `page()`; the tags every confirmed change purged. */
function confirmer(page: () => PageNow, logged: readonly string[] = []) {
  const purged: string[][] = [];
  const signals = new ChangeSignals({
    purge: async (m: PurgeMessage) => {
      if (m.kind === 'tags') purged.push([...m.tags]);
      return { purged: 0 };
    },
    purgeHere: async () => ({ purged: 0 }),
    metrics: { event: () => {}, invalidated: () => {}, lag: () => {} },
    log: pino({ level: 'silent' }),
    now: () => NOW,
    shortTtl: TTL,
    followedTtl: TTL,
    reboundMs: 0,
  });
  const confirmations = new PurgeConfirmations({
    ask: async () => ({ pages: [page()], now: NOW }),
    askDeletions: async () => ({ titles: new Set(logged), truncated: false }),
    confirmed: (title, onlyStatements, pageId, existence) => changeConfirmed(title, ns, onlyStatements, pageId, existence),
    apply: (list) => signals.apply(list),
    log: pino({ level: 'silent' }),
  });
  signals.confirmWith((title) => confirmations.note(title));
  const purge = async () => {
    await signals.apply([changeFromPurge(TITLE, ns)]);
    await confirmations.note(TITLE);
    await confirmations.settled();
  };
  return { purged, purge };
}

const MISSING: PageNow = { title: TITLE, missing: true };
const datatypesEnded = (purged: string[][]) => purged.some((tags) => tags.includes(DATATYPES));

describe('a property`s page seen missing, then existing', () => {
  it('created now (its first revision, within the window): its page`s answers end, no statement answer', async () => {
    let now = MISSING;
    const { purged, purge } = confirmer(() => now);
    await purge();
    now = { title: TITLE, missing: false, revid: 100, parentid: 0, revisionAt: NOW - 2_000, pageid: 50, comment: '/* wbeditentity-create-property:0| */' };
    await purge();
    expect(purged.some((tags) => tags.includes(`p:${TITLE}`))).toBe(true);
    expect(datatypesEnded(purged)).toBe(false);
  });

  it('restored (its revisions keep their dates, the deletion log names it): every answer showing its datatype ends', async () => {
    let now = MISSING;
    const { purged, purge } = confirmer(() => now, [TITLE]);
    await purge();
    now = { title: TITLE, missing: false, revid: 90, parentid: 0, revisionAt: NOW - 86_400_000, pageid: 50, comment: '/* wbeditentity-create-property:0| */' };
    await purge();
    expect(datatypesEnded(purged)).toBe(true);
  });

  it('restored with later revisions (its newest has a parent): every answer showing its datatype ends', async () => {
    let now = MISSING;
    const { purged, purge } = confirmer(() => now, [TITLE]);
    await purge();
    now = { title: TITLE, missing: false, revid: 95, parentid: 90, revisionAt: NOW - 2_000, pageid: 50, comment: '/* wbsetlabel-set:1|en */ x' };
    await purge();
    expect(datatypesEnded(purged)).toBe(true);
  });

  it('created before the window (its PURGE went to another process), the log naming no restoration: a change of the page, no statement answer', async () => {
    let now = MISSING;
    const { purged, purge } = confirmer(() => now);
    await purge();
    now = { title: TITLE, missing: false, revid: 100, parentid: 0, revisionAt: NOW - 3_600_000, pageid: 50, comment: '/* wbeditentity-create-property:0| */' };
    await purge();
    expect(purged.some((tags) => tags.includes('*'))).toBe(true);
    expect(datatypesEnded(purged)).toBe(false);
  });
});
