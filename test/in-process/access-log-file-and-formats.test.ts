// Operations, round 2: an access log an operator can choose. WIKIEDGE_ACCESS_LOG_FORMAT=json|combined,
// WIKIEDGE_ACCESS_LOG_FILE reopened on SIGUSR1 as nginx reopens its logs for logrotate
// (https://nginx.org/en/docs/control.html: "USR1 re-opening log files").
import { existsSync, readFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { startFakeUpstream } from '../support/fake-upstream.js';
import { startGateway } from '../support/gateway.js';
import { http } from '../support/http.js';
import { built, spawnGateway } from '../support/spawned.js';
import { scratchDir } from '../support/scratch.js';

function publicOrPrivate(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse): void {
  const pass = req.url?.includes('private=1') === true;
  res.writeHead(200, {
    'content-type': 'application/json',
    'cache-control': pass ? 'private, must-revalidate, max-age=0' : 's-maxage=600, max-age=600, public',
  });
  res.end('{"batchcomplete":true}');
}

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('WIKIEDGE_ACCESS_LOG_FILE', () => {
  it.runIf(built)(
    'SIGUSR1 reopens a moved log file with no line lost',
    async () => {
      const fake = await startFakeUpstream(publicOrPrivate);
      const dir = scratchDir('wikiedge-access-log-');
      const file = path.join(dir, 'access.log');
      const gw = await spawnGateway(fake.url, { WIKIEDGE_ACCESS_LOG_FILE: file });
      try {
        const ids: string[] = [];
        let moved = false;
        // Requests one after another, hits and misses, while the file is moved and reopened.
        for (let i = 0; i < 120; i++) {
          const id = `r-${i}-${randomUUID()}`;
          ids.push(id);
          const res = await http(`${gw.url}/w/api.php?action=query&meta=siteinfo&format=json&n=${i % 10}`, { headers: { 'x-request-id': id } });
          expect(res.status).toBe(200);
          if (i === 60) {
            // Lines reach the file in batches: wait until the first has, so the old file holds some.
            await vi.waitFor(() => expect(existsSync(file) && readFileSync(file, 'utf8').length).toBeGreaterThan(0), { timeout: 10_000 });
            // As logrotate does: move the file, then signal (postrotate), and go on once the
            // gateway says it reopened (a signal and the next request race in its event loop).
            renameSync(file, `${file}.1`);
            moved = true;
            gw.child.kill('SIGUSR1');
            await vi.waitFor(() => expect(gw.stdout()).toContain('access log reopened'), { timeout: 10_000 });
          }
        }
        expect(moved).toBe(true);
        await vi.waitFor(() => expect(gw.stdout()).toContain('access log reopened'), { timeout: 10_000 });
        await vi.waitFor(() => expect(existsSync(file)).toBe(true), { timeout: 10_000 });
        gw.child.kill('SIGTERM');
        expect(await gw.exited).toBe(0);
        const before = readFileSync(`${file}.1`, 'utf8').split('\n').filter(Boolean);
        const after = readFileSync(file, 'utf8').split('\n').filter(Boolean);
        const logged = [...before, ...after].map((l) => (JSON.parse(l) as { reqId: string }).reqId);
        // Every request once, in order, across the two files. Lines still held in the batch when
        // the signal came go to the new file (LineBuffer.reopen): the split is near, not at, 61.
        expect(logged).toEqual(ids);
        expect(before.length).toBeGreaterThan(0);
        expect(after.length).toBeGreaterThanOrEqual(120 - 61);
        // Nothing of the access log on stdout, where the other lines still go.
        expect(gw.stdout()).not.toContain('"msg":"request"');
      } finally {
        if (gw.child.exitCode === null) gw.child.kill('SIGKILL');
        await fake.close();
      }
    },
    60_000,
  );
});

describe('both log formats have every field', () => {
  it('json: ISO 8601 time, Host, Referer, protocol, the cache disposition and why, upstream time, request id', async () => {
    const fake = await startFakeUpstream(publicOrPrivate);
    const gw = await startGateway(fake.url, { WIKIEDGE_ACCESS_LOG_FORMAT: 'json' });
    try {
      const headers = { 'x-request-id': 'json-1', referer: 'https://wiki.example.org/wiki/Main_Page?token=abc', host: 'wiki.example.org' };
      await http(`${gw.apiUrl}?action=query&meta=userinfo&format=json&private=1`, { headers });
      const line = await vi.waitFor(() => {
        const found = gw.logs.find((l) => l['reqId'] === 'json-1');
        expect(found).toBeDefined();
        return found!;
      });
      expect(line).toMatchObject({
        reqId: 'json-1',
        host: 'wiki.example.org',
        referer: 'https://wiki.example.org/wiki/Main_Page?token=[redacted]',
        protocol: 'HTTP/1.1',
        cache: 'pass',
        notStored: expect.any(String),
        upstreamMs: expect.any(Number),
        timeIso: expect.stringMatching(ISO),
      });
      expect(new Date(line['timeIso'] as string).getTime()).toBe(line['time']);
    } finally {
      await gw.close();
      await fake.close();
    }
  });

  it('combined: nginx’s line with the cache disposition appended, hits included', async () => {
    const fake = await startFakeUpstream(publicOrPrivate);
    const file = path.join(scratchDir('wikiedge-combined-'), 'access.log');
    const gw = await startGateway(fake.url, { WIKIEDGE_ACCESS_LOG_FORMAT: 'combined', WIKIEDGE_ACCESS_LOG_FILE: file });
    try {
      const url = `${gw.apiUrl}?action=query&meta=siteinfo&format=json&token=secret`;
      const headers = { referer: 'https://wiki.example.org/wiki/A "quoted" page', 'user-agent': 'mwn/2.0 (bot)' };
      expect((await http(url, { headers })).status).toBe(200);
      expect((await http(url, { headers })).status).toBe(200);
      const lines = await vi.waitFor(
        () => {
          const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
          const got = text.split('\n').filter(Boolean);
          expect(got.length).toBe(2);
          return got;
        },
        { timeout: 5_000 },
      );
      const combined =
        /^127\.0\.0\.1 - - \[\d\d\/[A-Z][a-z]{2}\/\d{4}:\d\d:\d\d:\d\d \+0000\] "GET \/w\/api\.php\?action=query&meta=siteinfo&format=json&token=\[redacted\] HTTP\/1\.1" 200 (\d+) "https:\/\/wiki\.example\.org\/wiki\/A \\x22quoted\\x22 page" "mwn\/2\.0 \(bot\)" (miss|hit)$/;
      expect(lines[0]).toMatch(combined);
      expect(lines[1]).toMatch(combined);
      expect(combined.exec(lines[0]!)![2]).toBe('miss');
      expect(combined.exec(lines[1]!)![2]).toBe('hit');
      expect(Number(combined.exec(lines[1]!)![1])).toBeGreaterThan(0);
    } finally {
      await gw.close();
      await fake.close();
    }
  });
});
