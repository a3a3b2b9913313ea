// ApiQueryRecentChanges writes rccontinue from the row's rc_timestamp as the database holds it:
// TS_MW on MySQL and SQLite, a timestamptz on PostgreSQL (maintenance/postgres/tables-generated.sql).
// The follower reads it only to step past a row the wiki will not show (follower.ts readNewRows).
import { describe, expect, it } from 'vitest';
import { positionOfContinue } from '../../src/invalidation/follower-cursor.js';

const s = Date.parse('2026-11-30T06:00:01Z') / 1000;

describe('positionOfContinue', () => {
  it('reads the MySQL/SQLite and the PostgreSQL forms alike', () => {
    expect(positionOfContinue('20261130060001|1234')).toEqual({ s, id: 1234 });
    expect(positionOfContinue('2026-11-30 06:00:01+00|1234')).toEqual({ s, id: 1234 });
    expect(positionOfContinue('2026-11-30 06:00:01+00:00|1234')).toEqual({ s, id: 1234 });
  });

  it('nothing for what is neither', () => {
    for (const v of ['', '20261130060001', '2026113006000|1', '20261130060001|x', '2026-11-30 06:00:01+02|1', '20261130060001|1|2']) {
      expect(positionOfContinue(v)).toBeUndefined();
    }
  });
});
