// A tokenless anonymous `action=purge` makes MediaWiki send a CDN PURGE of the page through the
// gateway (ApiPurge needs no token). It must not empty every list: a PURGE invalidates the page's
// own answers (policy/changes.ts changeFromPurge), and what depends on lists goes only once the
// wiki confirms the page changed (src/invalidation/purge-confirmation.ts).
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { PurgeConfirmations, pagesOfAnswer, type PageNow } from '../../src/invalidation/purge-confirmation.js';
import { changeConfirmed, changeFromPurge, type Change } from '../../src/policy/changes.js';

const NOW = Date.parse('2026-11-28T12:00:00Z');

function confirmer(pages: (titles: readonly string[]) => PageNow[] | Error, deleted: readonly string[] = []) {
  const applied: Change[][] = [];
  const asked: string[][] = [];
  const c = new PurgeConfirmations({
    ask: async (titles) => {
      asked.push([...titles]);
      const p = pages(titles);
      if (p instanceof Error) throw p;
      return { pages: p, now: NOW };
    },
    askDeletions: async () => ({ titles: new Set(deleted), truncated: false }),
    confirmed: (title) => changeConfirmed(title),
    apply: async (list) => void applied.push([...list]),
    log: pino({ level: 'silent' }),
  });
  return { c, applied, asked };
}

describe('a PURGE alone', () => {
  it('names the page alone, no namespace, no list', () => {
    expect(changeFromPurge('Main Page').tags).toEqual(['p:Main Page']);
  });
});

describe('purge confirmation', () => {
  it('a purge of a page whose newest revision is old confirms nothing, however often it is sent', async () => {
    const { c, applied, asked } = confirmer((titles) => titles.map((title) => ({ title, missing: false, revid: 7, revisionAt: NOW - 86_400_000 })));
    for (let i = 0; i < 30; i++) {
      c.note('Main Page');
      await c.settled();
    }
    expect(applied).toEqual([]);
    expect(asked.length).toBe(30);
  });
  it('a page with a new revision is a change (once per revision): its namespace and any list go', async () => {
    let revid = 7;
    const { c, applied } = confirmer((titles) => titles.map((title) => ({ title, missing: false, revid, revisionAt: NOW - 86_400_000 })));
    c.note('Main Page');
    await c.settled();
    revid = 8;
    c.note('Main Page');
    await c.settled();
    c.note('Main Page');
    await c.settled();
    expect(applied.length).toBe(1);
    expect(applied[0]![0]!.tags).toEqual(expect.arrayContaining(['*', 'p:Main Page', 'n:0']));
  });
  it('a revision made within the window, or a page the deletion log says is gone, is a change the first time it is seen', async () => {
    const { c, applied } = confirmer(
      () => [
        { title: 'Fresh', missing: false, revid: 9, revisionAt: NOW - 2_000 },
        { title: 'Gone', missing: true },
      ],
      ['Gone'],
    );
    c.note('Fresh');
    c.note('Gone');
    await c.settled();
    expect(applied.flat().map((ch) => ch.tags[1])).toEqual(['p:Fresh', 'p:Gone']);
  });
  it('many PURGEs in a burst are one question and one invalidation', async () => {
    const { c, applied, asked } = confirmer((titles) => titles.map((title) => ({ title, missing: false, revid: 1, revisionAt: NOW - 1_000 })));
    for (let i = 0; i < 40; i++) c.note(`Page ${i}`);
    await c.settled();
    expect(asked.length).toBe(1);
    expect(applied.length).toBe(1);
    expect(applied[0]!.length).toBe(40);
  });
  it('when the wiki cannot say, every page counts as changed (never a stale list)', async () => {
    const { c, applied } = confirmer(() => new Error('down'));
    c.note('X');
    await c.settled();
    expect(applied.flat().length).toBe(1);
  });
  it('reads the wiki`s answer, normalized titles mapped back to those asked', () => {
    const answer = {
      curtimestamp: '2026-11-28T12:00:00Z',
      query: {
        normalized: [{ from: 'Item:Q1_x', to: 'Item:Q1 x' }],
        pages: [
          { pageid: 1, ns: 120, title: 'Item:Q1 x', revisions: [{ revid: 30, parentid: 29, timestamp: '2026-11-28T11:59:58Z' }] },
          { ns: 0, title: 'Nowhere', missing: true },
        ],
      },
    };
    const { pages, now } = pagesOfAnswer(answer);
    expect(now).toBe(NOW);
    expect(pages.map((p) => p.title)).toEqual(['Item:Q1 x', 'Item:Q1_x', 'Nowhere']);
    expect(pages[0]).toMatchObject({ revid: 30, revisionAt: NOW - 2_000, missing: false });
    expect(pages[2]!.missing).toBe(true);
  });
});
