// Wikidata PURGEs pages faster than its API answers one question. Each question to the wiki asks
// about every page purged while the previous one was out (up to 50, ApiBase::LIMIT_SML1), so the
// confirmations keep up and the PURGE's answer (which MediaWiki waits for before it answers the
// save: includes/cache/HtmlCacheUpdater.php PURGE_PRESEND, includes/deferred/CdnCacheUpdate.php
// runMulti) waits about two questions' time, however long the pages keep coming. Chained one
// page per question behind each other, 50 pages/s against a wiki answering in 100 ms made 1000
// questions and a lag growing by half a second every second.
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import {
  BATCH_MS,
  CONFIRM_WAIT_MS,
  PurgeConfirmations,
  QUESTIONS_AT_ONCE,
  TITLES_PER_QUESTION,
  type PageNow,
} from '../../src/invalidation/purge-confirmation.js';
import { changeConfirmed, type Change } from '../../src/policy/changes.js';
import { SimulatedClock } from '../support/simulated-clock.js';

const NOW = Date.parse('2026-11-29T09:00:00Z');
/** The wiki's clock runs 40 s behind the gateway's. */
const SKEW_MS = -40_000;

/** A gateway's confirmer in front of a wiki answering each question in `wikiMs`. */
function setUp(wikiMs: number) {
  const clock = new SimulatedClock(NOW);
  const editedAt = new Map<string, number>();
  const questions: { titles: string[]; at: number }[] = [];
  let out = 0;
  let mostOut = 0;
  const titleOf = new WeakMap<Change, string>();
  const appliedAt = new Map<string, number>();
  let applies = 0;
  const c = new PurgeConfirmations({
    ask: async (titles) => {
      questions.push({ titles: [...titles], at: clock.now() });
      mostOut = Math.max(mostOut, ++out);
      await clock.sleep(wikiMs);
      out--;
      const pages = titles.map((title): PageNow => ({ title, missing: false, revid: 1, revisionAt: editedAt.get(title)! + SKEW_MS }));
      return { pages, now: clock.now() + SKEW_MS };
    },
    confirmed: (title) => {
      const change = changeConfirmed(title);
      titleOf.set(change, title);
      return change;
    },
    apply: async (list) => {
      applies++;
      for (const change of list) appliedAt.set(titleOf.get(change)!, clock.now());
    },
    log: pino({ level: 'silent' }),
    clock,
  });
  const purgedAt = new Map<string, number>();
  const waited: number[] = [];
  /** A page edited just now, then its PURGE. */
  const purge = (title: string) => {
    editedAt.set(title, clock.now() - 300);
    purgedAt.set(title, clock.now());
    const at = clock.now();
    void c.note(title).then(() => waited.push(clock.now() - at));
  };
  /** Pages purged at `perSecond` for `seconds`, one after the other. */
  const purgeAtRate = async (perSecond: number, seconds: number) => {
    const every = 1000 / perSecond;
    for (let i = 0; i < perSecond * seconds; i++) {
      purge(`Page ${i}`);
      await clock.advance(every);
    }
  };
  const lags = () => [...purgedAt].map(([title, at]) => (appliedAt.get(title) ?? Infinity) - at);
  return { c, clock, questions, purge, purgeAtRate, lags, waited, appliedAt, mostOut: () => mostOut, applies: () => applies };
}

describe('purge confirmations at a high PURGE rate', () => {
  it('50 pages/s against a wiki answering in 100 ms: every page confirmed within two questions` time, a few pages a question, one question out at a time', async () => {
    const wikiMs = 100;
    const { c, clock, questions, purgeAtRate, lags, waited, appliedAt, mostOut, applies } = setUp(wikiMs);
    await purgeAtRate(50, 20);
    await clock.advance(1_000);
    expect(appliedAt.size).toBe(1000);
    // The lag of the last page is that of the first: it does not grow with time.
    expect(Math.max(...lags())).toBeLessThanOrEqual(BATCH_MS + 2 * wikiMs);
    expect(Math.max(...waited)).toBeLessThanOrEqual(BATCH_MS + 2 * wikiMs);
    expect(waited.length).toBe(1000);
    // About one question each time the wiki answers, each with the pages purged meanwhile.
    expect(questions.length).toBeLessThanOrEqual((20 * 1000) / wikiMs + 1);
    expect(applies()).toBe(questions.length);
    expect(Math.min(...questions.slice(1).map((q) => q.titles.length))).toBeGreaterThanOrEqual(4);
    expect(mostOut()).toBe(1);
    await c.settled();
  });

  it('1000 pages/s against the same wiki: full questions of 50, a few out together, the lag still bounded', async () => {
    const wikiMs = 100;
    const { c, clock, questions, purgeAtRate, lags, waited, appliedAt, mostOut } = setUp(wikiMs);
    await purgeAtRate(1000, 5);
    await clock.advance(1_000);
    expect(appliedAt.size).toBe(5000);
    expect(Math.max(...questions.map((q) => q.titles.length))).toBe(TITLES_PER_QUESTION);
    expect(questions.length).toBeLessThanOrEqual(5000 / TITLES_PER_QUESTION + 1);
    expect(mostOut()).toBeGreaterThan(1);
    expect(mostOut()).toBeLessThanOrEqual(QUESTIONS_AT_ONCE);
    expect(Math.max(...lags())).toBeLessThanOrEqual(BATCH_MS + 2 * wikiMs);
    expect(Math.max(...waited)).toBeLessThanOrEqual(BATCH_MS + 2 * wikiMs);
    await c.settled();
  });

  it('pages purged faster than even the questions out together take: the PURGE`s answer does not wait for the backlog, and every page is still confirmed', async () => {
    const wikiMs = 2_000;
    const { c, clock, purge, waited, appliedAt } = setUp(wikiMs);
    const backlog = QUESTIONS_AT_ONCE * TITLES_PER_QUESTION;
    for (let i = 0; i < 3 * backlog; i++) purge(`Page ${i}`);
    await clock.advance(0);
    // The first pages are asked at once and the next ones wait for those questions' answers (at
    // most CONFIRM_WAIT_MS); those behind them do not wait at all.
    expect(waited).toEqual(Array(backlog).fill(0));
    await clock.advance(CONFIRM_WAIT_MS);
    expect(waited.length).toBe(3 * backlog);
    expect(Math.max(...waited)).toBe(CONFIRM_WAIT_MS);
    await clock.advance(3 * wikiMs);
    expect(appliedAt.size).toBe(3 * backlog);
    await c.settled();
  });
});
