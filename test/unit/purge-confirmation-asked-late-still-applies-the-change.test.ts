// A page purged right after its edit, but asked about only 90 s later (the wiki slow to answer
// the question before it): its edit is still a change, since "made within CONFIRM_WINDOW_MS" is
// judged against when the PURGE arrived, not when the question was asked. Judged at asking time,
// a page the confirmer had not asked about before counted as unchanged, and its lists, searches
// and `*` entries were never invalidated. The wiki's clock here runs 40 s behind the gateway's.
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { CONFIRM_WINDOW_MS, PurgeConfirmations, confirmsChange, type PageNow } from '../../src/invalidation/purge-confirmation.js';
import { changeConfirmed, type Change } from '../../src/policy/changes.js';
import { SimulatedClock } from '../support/simulated-clock.js';

const NOW = Date.parse('2026-11-29T09:00:00Z');
const SKEW_MS = -40_000;
const SLOW_MS = 90_000;

function setUp() {
  const clock = new SimulatedClock(NOW);
  /** Each page's newest revision, the wiki's clock. */
  const revisionAt = new Map<string, number>();
  const titleOf = new WeakMap<Change, string>();
  const confirmed: string[] = [];
  let answerSlow!: () => void;
  const slowAnswer = new Promise<void>((resolve) => (answerSlow = resolve));
  const c = new PurgeConfirmations({
    ask: async (titles) => {
      if (titles.includes('Slow')) await slowAnswer;
      const pages = titles.map((title): PageNow => ({ title, missing: false, revid: 5, revisionAt: revisionAt.get(title)! }));
      return { pages, now: clock.now() + SKEW_MS };
    },
    confirmed: (title) => {
      const change = changeConfirmed(title);
      titleOf.set(change, title);
      return change;
    },
    apply: async (list) => void confirmed.push(...list.map((change) => titleOf.get(change)!)),
    log: pino({ level: 'silent' }),
    clock,
  });
  return { c, clock, revisionAt, confirmed, answerSlow };
}

describe('a purge confirmation asked late', () => {
  it('a page edited just before its PURGE, asked about 90 s later behind a slow question: its edit is confirmed', async () => {
    const { c, clock, revisionAt, confirmed, answerSlow } = setUp();
    revisionAt.set('Slow', NOW + SKEW_MS - 86_400_000);
    void c.note('Slow');
    const slowAsked = c.settled();
    // Purged while the question about 'Slow' is out: asked once its answer is back, 90 s on.
    revisionAt.set('Edited', clock.now() + SKEW_MS - 500);
    revisionAt.set('Old', clock.now() + SKEW_MS - CONFIRM_WINDOW_MS - 1_000);
    void c.note('Edited');
    void c.note('Old');
    await clock.advance(SLOW_MS);
    answerSlow();
    await slowAsked;
    await c.settled();
    // The page whose newest revision was older than the window when its PURGE came: still no change.
    expect(confirmed).toEqual(['Edited']);
  });

  it('the window runs back from the PURGE`s arrival, on the wiki`s clock', () => {
    const page = (revisionAt: number): PageNow => ({ title: 'P', missing: false, revid: 5, revisionAt });
    const wikiNow = NOW + SKEW_MS;
    expect(confirmsChange(undefined, page(wikiNow - 2 * CONFIRM_WINDOW_MS), wikiNow, CONFIRM_WINDOW_MS + 1)).toBe(true);
    expect(confirmsChange(undefined, page(wikiNow - 2 * CONFIRM_WINDOW_MS), wikiNow, CONFIRM_WINDOW_MS - 1)).toBe(false);
    // A page asked about before: a new revision whenever it was made, the same one never.
    expect(confirmsChange('r4', page(wikiNow - 86_400_000), wikiNow, 0)).toBe(true);
    expect(confirmsChange('r5', page(wikiNow - 1_000), wikiNow, 0)).toBe(false);
  });
});
