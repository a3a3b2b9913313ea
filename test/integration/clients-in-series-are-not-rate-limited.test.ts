// MediaWiki's API etiquette asks bots to make their requests "in series rather than in parallel"
// and sets them no rate. With the gateway's default budget of uncached requests (20 a second,
// a burst of 100), a client in series read straight through it and got 429: Debian's mwclient,
// which adds meta=userinfo to every query (so every read is a private answer, passed) and does not
// retry a 429, failed after 90 pages that the wiki served (fixed in commit 78ac116;
// nodemw failed the same way after 220). Now only a client asking in parallel is refused:
// mwclient reads 150 pages through the gateway with the default limits, and 40 requests at once
// from one address still get 429s.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { FIELDS } from '../../src/config/fields.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { http } from '../support/http.js';

const wiki = inject('wikiUrl');
/** Debian's interpreter, where python3-mwclient lives (scripts/install-system-deps.sh). */
const PYTHON = process.env['WIKIEDGE_TEST_PYTHON'] ?? '/usr/bin/python3';
const READS = 150;
/** The shipped defaults of the budget (the test harness turns it off). */
const RATE = FIELDS.clientMissRate.default as number;
const BURST = FIELDS.clientMissBurst.default as number;

const MWCLIENT_READS = `
import json, sys, mwclient
host, prefix, reads = sys.argv[1], sys.argv[2], int(sys.argv[3])
site = mwclient.Site(host, path='/w/', scheme='http')
done, error = 0, None
for i in range(reads):
    try:
        site.pages['%s %d' % (prefix, i)].text()
        done += 1
    except Exception as e:
        error = repr(e)[:300]
        break
print(json.dumps({'done': done, 'error': error}))
`;

describe('a client in series with the default budget of uncached requests', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    // Refusals answered at once, to keep the parallel case short.
    gw = await startGateway(wiki, {
      WIKIEDGE_CLIENT_MISS_RATE: String(RATE),
      WIKIEDGE_CLIENT_MISS_BURST: String(BURST),
      WIKIEDGE_CLIENT_REFUSAL_DELAY_MS: '0',
      // No share of turns per client: the parallel case is refused by the budget alone.
      WIKIEDGE_CLIENT_MAX_CONCURRENCY: '0',
    });
  });
  afterAll(() => gw.close());

  it(`mwclient reads ${READS} pages, each a private answer, without a refusal`, async () => {
    expect(READS).toBeGreaterThan(BURST);
    const { stdout } = await promisify(execFile)(PYTHON, ['-c', MWCLIENT_READS, new URL(gw.url).host, `Series ${randomUUID()}`, String(READS)], {
      timeout: 120_000,
    });
    expect(JSON.parse(stdout)).toEqual({ done: READS, error: null });
  });

  it('the same address asking in parallel is still refused past its burst', async () => {
    const bust = randomUUID();
    const answers = await Promise.all(
      Array.from({ length: BURST + 40 }, (_, i) => http(`${gw.apiUrl}?action=query&list=allpages&format=json&bust=${bust}-${i}`)),
    );
    expect(answers.filter((a) => a.status === 429).length).toBeGreaterThan(0);
    expect(answers.every((a) => a.status === 200 || a.status === 429)).toBe(true);
    const metrics = (await http(`${gw.adminUrl}/metrics`)).body;
    expect(metrics).toMatch(/wikiedge_upstream_rejected_total\{reason="client-budget"\} [1-9]/);
  });
});
