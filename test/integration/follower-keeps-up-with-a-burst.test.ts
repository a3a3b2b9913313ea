// The change follower against the real wiki after a burst: 50,000 recentchanges rows written
// straight into the wiki's SQLite database (one transaction, dated over the last minute: a mass
// deletion, an import, a fast bot), then one real edit through the API. Within 5 polls the
// gateway serves the edited page fresh, applied or covered by a gap (`behind`) the follower
// reports (wikiedge_change_follower_gaps_total{reason="behind"}, its log line); at no scrape of
// /metrics is it up (wikiedge_change_follower_up 1) with its lag past WIKIEDGE_RC_MAX_LAG_SECONDS.
// The burst rows are deleted afterwards (as $wgRCMaxAge would), so that the next files see none.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { ADMIN_PASS, ADMIN_USER, apiWrite, loginCookies } from '../support/wiki.js';

const wiki = inject('wikiUrl');
const db = path.join(inject('wikiData'), 'db', 'wikiedge.sqlite');
const run = promisify(execFile);
const BURST = 50_000;
const MAX_LAG_SECONDS = 10;

/**
 * One INSERT … SELECT over a recursive CTE: one transaction, about a second for 50,000 rows on
 * the test machine (docs/BENCHMARKS.md). Edits (rc_type 0) of pages that do not exist, by the
 * wiki's first actor, dated evenly over the last 60 s of the database's clock (the wiki's).
 */
async function insertBurst(tag: string): Promise<number> {
  const t0 = Date.now();
  await run('sqlite3', [
    '-cmd',
    '.timeout 10000',
    db,
    `WITH RECURSIVE n(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM n WHERE x < ${BURST - 1})
     INSERT INTO recentchanges (rc_timestamp, rc_actor, rc_namespace, rc_title, rc_comment_id, rc_type, rc_source, rc_ip)
     SELECT strftime('%Y%m%d%H%M%S', 'now', printf('-%d seconds', 60 - (x * 60) / ${BURST})), 1, 0, '${tag}_' || x, 1, 0, 'mw.edit', '127.0.0.1' FROM n;`,
  ]);
  return Date.now() - t0;
}

const metric = (text: string, re: RegExp) => Number(re.exec(text)?.[1] ?? NaN);

describe('the change follower keeps up with a burst of 50,000 rows in the wiki', () => {
  let gw: RunningGateway;
  let admin: string;
  const tag = `Burst_${randomUUID().slice(0, 8)}`;
  beforeAll(async () => {
    gw = await startGateway(wiki, { WIKIEDGE_RC_FOLLOW: 'true', WIKIEDGE_RC_POLL_MS: '250', WIKIEDGE_RC_MAX_LAG_SECONDS: String(MAX_LAG_SECONDS) });
    admin = await loginCookies(wiki, ADMIN_USER, ADMIN_PASS);
    for (let i = 0; !/wikiedge_change_follower_up 1/.test((await http(`${gw.adminUrl}/metrics`)).body); i++) {
      if (i > 300) throw new Error('the follower never came up');
      await sleep(50);
    }
  });
  afterAll(async () => {
    await run('sqlite3', ['-cmd', '.timeout 10000', db, `DELETE FROM recentchanges WHERE rc_title LIKE '${tag}\\_%' ESCAPE '\\';`]).catch(() => undefined);
    await gw?.close();
  });

  const read = (q: string) => http(`${gw.apiUrl}?${q}&format=json&formatversion=2`);

  it('the edit after the burst is fresh within 5 polls, applied or covered by a reported gap; never up while behind', async () => {
    const title = `After a burst ${randomUUID()}`;
    const q = `action=query&prop=revisions&rvprop=content&rvslots=main&titles=${encodeURIComponent(title)}`;
    await apiWrite(wiki, admin, { action: 'edit', title, text: 'one' });
    for (let i = 0; ; i++) {
      const r = await read(q);
      if (r.body.includes('"content":"one"') && header(r, 'x-cache') === 'hit') break;
      if (i > 300) throw new Error('never cached');
      await sleep(50);
    }
    const before = (await http(`${gw.adminUrl}/metrics`)).body;
    const polls0 = metric(before, /^wikiedge_change_follower_polls_total\{outcome="ok"\} (\d+)/m);

    const insertMs = await insertBurst(tag);
    await apiWrite(wiki, admin, { action: 'edit', title, text: 'two' });

    const samples: { up: number; lag: number }[] = [];
    let polls = 0;
    let fresh = false;
    for (const t0 = Date.now(); Date.now() - t0 < 45_000; ) {
      const m = (await http(`${gw.adminUrl}/metrics`)).body;
      samples.push({ up: metric(m, /^wikiedge_change_follower_up (\d+)/m), lag: metric(m, /^wikiedge_change_follower_lag_seconds (\S+)/m) });
      polls = metric(m, /^wikiedge_change_follower_polls_total\{outcome="ok"\} (\d+)/m) - polls0;
      if ((await read(q)).body.includes('"content":"two"')) {
        fresh = true;
        break;
      }
      await sleep(100);
    }
    const after = (await http(`${gw.adminUrl}/metrics`)).body;
    const behindGaps = metric(after, /^wikiedge_change_follower_gaps_total\{reason="behind"\} (\d+)/m);
    console.log(`burst of ${BURST} rows inserted in ${insertMs} ms; fresh after ${polls} polls; behind gaps ${behindGaps}; samples ${samples.length}`);
    if (process.env['DEBUG_BURST']) console.log(JSON.stringify(samples), JSON.stringify(gw.logs.filter((l) => l['component'] === 'change-follower')));
    expect(fresh).toBe(true);
    expect(polls).toBeLessThanOrEqual(5);
    for (const s of samples) if (s.up === 1) expect(s.lag).toBeLessThanOrEqual(MAX_LAG_SECONDS);
    if (behindGaps > 0) expect(gw.logs.some((l) => l['gap'] === 'behind')).toBe(true);
  });
});
