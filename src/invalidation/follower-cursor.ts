/**
 * The change follower's cursor (follower.ts): positions in recentchanges' order, the late window's
 * floor and the rows seen above it, and the stored form read back (either version). Pure: no
 * I/O, no clock.
 */
/** How far before the cursor rows inserted late are looked for (seconds of the wiki's clock). */
export const LATE_WINDOW_MS = 60_000;

/** A position in recentchanges' order: rc_timestamp (whole seconds since the epoch), then rc_id. */
export interface Position {
  readonly s: number;
  readonly id: number;
}

/**
 * The cursor as stored (JSON, version 2). Every row up to (ts, id) was read and applied; `seen`
 * holds the ids (with their timestamps, seconds) of every row applied after the floor
 * (floorTs, floorId), which is where the next poll starts reading.
 */
export interface Cursor {
  readonly v: 2;
  readonly ts: string;
  readonly id: number;
  readonly floorTs: string;
  readonly floorId: number;
  readonly seen: readonly (readonly [number, number])[];
  /** When the follower last vouched (ms since the epoch, its own clock). */
  readonly polledAt?: number;
  /** The last poll ended behind the wiki by more than the bound: nobody vouches. */
  readonly behind?: boolean;
  /**
   * The last poll's purges had not all reached the shared tier: the follower instance that owes
   * them (ChangeFollower, its `instance`), which alone can carry them. Another taking the cursor
   * up takes a gap (`owed`).
   */
  readonly owedBy?: string;
}

/** The follower's working state: the cursor's fields, seen as a map (id → timestamp, seconds). */
export interface State {
  pos: Position;
  floor: Position;
  seen: Map<number, number>;
}

export function cmp(a: Position, b: Position): number {
  return a.s - b.s || a.id - b.id;
}

/**
 * The late window's next floor: LATE_WINDOW_MS before the cursor, or higher so that at most
 * `max` applied rows up to the cursor lie above it; never lower than before (rows below the old
 * floor were not kept in `seen`: read again they would be applied twice), and never above the
 * cursor. Rows dated ahead of the wiki's clock sit above the cursor in `seen` (applied once, read
 * again as the cursor reaches them): a floor among them would start every next read after them,
 * past the rows the wiki writes once its clock is right again, which would never be read
 * (test/in-process/change-follower-after-the-wikis-clock-came-back.test.ts).
 */
export function nextFloor(floor: Position, pos: Position, seen: ReadonlyMap<number, number>, max: number): Position {
  let next: Position = { s: pos.s - LATE_WINDOW_MS / 1000, id: 0 };
  if (cmp(next, floor) < 0) next = floor;
  if (cmp(next, pos) > 0) return pos;
  const kept: Position[] = [];
  for (const [id, s] of seen) {
    const at = { s, id };
    if (cmp(at, next) > 0 && cmp(at, pos) <= 0) kept.push(at);
  }
  if (kept.length <= max) return next;
  kept.sort(cmp);
  return kept[kept.length - max - 1]!;
}

/**
 * Whether the row at `at` was applied already: its rc_id was seen with the same timestamp. An id
 * alone is not a row: after a failover of the wiki's database that lost the last commits, the new
 * primary hands the lost rows' ids (AUTO_INCREMENT goes on from what it has) to new changes, dated
 * later, and a follower that knew those ids skipped them and moved its cursor past them: what they
 * changed stayed cached (test/in-process/change-follower-applies-a-reissued-rc-id.test.ts). A row
 * reissued within the same second as the lost one is still taken for it (docs/INVALIDATION.md,
 * Known limits); a row read again by the late window keeps its timestamp, and is not applied twice.
 */
export function wasSeen(seen: ReadonlyMap<number, number>, at: Position): boolean {
  return seen.get(at.id) === at.s;
}

/** Drops from `seen` the rows at or below the floor: never read again. */
export function prune(st: State): void {
  for (const [id, s] of st.seen) if (cmp({ s, id }, st.floor) <= 0) st.seen.delete(id);
}

export function stateOf(c: Cursor): State {
  return {
    pos: { s: seconds(c.ts), id: c.id },
    floor: { s: seconds(c.floorTs), id: c.floorId },
    seen: new Map(c.seen.map(([s, id]) => [id, s])),
  };
}

/**
 * A stored cursor, in either form: version 2 (this file's Cursor), or the form before it
 * (`{ts, id, seen: ids}`, the newest row read and the ids read within 120 s before it), which is
 * still read: (ts, id) was the newest row read, every row before it read too, so it is this
 * form's cursor; its ids, dated at the cursor, stay seen until the window passes them. Anything
 * else: undefined (a gap, cursor-lost).
 */
export function cursorFromStored(raw: unknown): Cursor | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const c = raw as Record<string, unknown>;
  const ts = c['ts'];
  const id = c['id'];
  if (typeof ts !== 'string' || !Number.isFinite(Date.parse(ts)) || !Number.isInteger(id) || (id as number) < 0) return undefined;
  const polledAt = typeof c['polledAt'] === 'number' ? { polledAt: c['polledAt'] } : {};
  const behind = c['behind'] === true ? { behind: true } : {};
  const owedBy = typeof c['owedBy'] === 'string' && c['owedBy'] !== '' ? { owedBy: c['owedBy'] } : {};
  if (c['v'] === 2) {
    const floorTs = c['floorTs'];
    const floorId = c['floorId'];
    const seen = c['seen'];
    if (typeof floorTs !== 'string' || !Number.isFinite(Date.parse(floorTs)) || !Number.isInteger(floorId) || !Array.isArray(seen)) return undefined;
    const pairs = seen.filter((p): p is [number, number] => Array.isArray(p) && Number.isInteger(p[0]) && Number.isInteger(p[1]));
    if (pairs.length !== seen.length) return undefined;
    return { v: 2, ts, id: id as number, floorTs, floorId: floorId as number, seen: pairs, ...polledAt, ...behind, ...owedBy };
  }
  if (c['v'] !== undefined || !Array.isArray(c['seen'])) return undefined;
  const ids = (c['seen'] as unknown[]).filter((x): x is number => Number.isInteger(x));
  const s = seconds(ts);
  return { v: 2, ts, id: id as number, floorTs: isoOf(s - LATE_WINDOW_MS / 1000), floorId: 0, seen: ids.map((i) => [s, i] as const), ...polledAt };
}

/** A MediaWiki timestamp (ISO 8601 to the second) as whole seconds since the epoch. */
export function seconds(iso: string): number {
  return Math.floor(Date.parse(iso) / 1000);
}

/** Seconds since the epoch as MediaWiki writes timestamps (ISO 8601 to the second, `Z`). */
export function isoOf(s: number): string {
  return new Date(s * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * The position an rccontinue names, or undefined. ApiQueryRecentChanges writes the row's
 * rc_timestamp as the database holds it, then `|` and rc_id: TS_MW on MySQL and SQLite
 * (`20261130060000|1234`), a timestamptz on PostgreSQL (`2026-11-30 06:00:00+00|1234`).
 */
export function positionOfContinue(value: string): Position | undefined {
  const m = /^(\d{4})-?(\d{2})-?(\d{2})[ T]?(\d{2}):?(\d{2}):?(\d{2})(?:Z|[+-]00(?::?00)?)?\|(\d{1,15})$/.exec(value);
  if (!m) return undefined;
  const s = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) / 1000;
  return Number.isFinite(s) ? { s, id: Number(m[7]) } : undefined;
}

/** TS_MW (14 digits), the form rccontinue carries (ApiQueryRecentChanges.php:456-466). */
export function tsMw(s: number): string {
  return isoOf(s).replace(/[^0-9]/g, '');
}
