// The local store guard (src/cache/store.ts InvalidationLog): an answer asked for before one of its
// dependencies was invalidated is not stored; one asked for after is; a flush counts for every
// tag; a forgotten record is answered conservatively.
import { describe, expect, it } from 'vitest';
import { InvalidationLog } from '../../src/cache/store.js';

describe('InvalidationLog', () => {
  it('nothing invalidated since the mark: the answer may be stored', () => {
    const log = new InvalidationLog();
    log.record(['p:Other']);
    const mark = log.mark();
    expect(log.invalidatedSince(['p:Page', '*'], mark)).toBe(false);
  });

  it('one of its tags invalidated after the mark: not stored', () => {
    const log = new InvalidationLog();
    const mark = log.mark();
    log.record(['p:Page', 'n:0']);
    expect(log.invalidatedSince(['p:Page'], mark)).toBe(true);
    expect(log.invalidatedSince(['n:0'], mark)).toBe(true);
  });

  it('other tags invalidated after the mark: stored', () => {
    const log = new InvalidationLog();
    const mark = log.mark();
    log.record(['p:Other']);
    expect(log.invalidatedSince(['p:Page'], mark)).toBe(false);
  });

  it('invalidated before the mark: stored (the fetch began after the change)', () => {
    const log = new InvalidationLog();
    log.record(['p:Page']);
    const mark = log.mark();
    expect(log.invalidatedSince(['p:Page'], mark)).toBe(false);
  });

  it('a flush (a gap) after the mark counts for every tag, even none', () => {
    const log = new InvalidationLog();
    const mark = log.mark();
    log.recordFlush();
    expect(log.invalidatedSince(['p:Page'], mark)).toBe(true);
    expect(log.invalidatedSince([], mark)).toBe(true);
    expect(log.invalidatedSince([], log.mark())).toBe(false);
  });

  it('bounded: a mark older than a forgotten record is answered conservatively', () => {
    const log = new InvalidationLog(2);
    const old = log.mark();
    log.record(['p:A']);
    log.record(['p:B']);
    log.record(['p:C']);
    // p:A was forgotten; it may have been the answer's tag.
    expect(log.invalidatedSince(['p:Z'], old)).toBe(true);
    const recent = log.mark();
    log.record(['p:D']);
    expect(log.invalidatedSince(['p:Z'], recent)).toBe(false);
    expect(log.invalidatedSince(['p:D'], recent)).toBe(true);
  });
});
