// WIKIEDGE_WORKERS=2: the admin inspection routes are answered by the workers over IPC
// (cluster/inspect-workers.ts). GET /cache lists what each worker holds, marked with the worker,
// one session numbered alike in both; /cache/stats sums them; POST /trace names the worker it ran
// in; a worker that does not answer is listed as such; after a SIGHUP, GET /config shows the new
// value. No cookie value or session slot reaches an answer.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, adminGet, adminPost, answerPublicOrSessionPrivate } from '../support/admin.js';
import { logged, untilLogged } from '../support/cluster-logs.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { header, http } from '../support/http.js';
import { scratchDir } from '../support/scratch.js';
import { built, spawnGateway, type SpawnedGateway } from '../support/spawned.js';

const SESSION_VALUE = 'ssssssssssssssssssssssssssssssss';
const COOKIE = `wiki_session=${SESSION_VALUE}; wikiToken=tokenofthesession0123456789`;
const SECRETS = [SESSION_VALUE, 'tokenofthesession0123456789', 'wiki_session', ADMIN_TOKEN];

interface Variant {
  worker?: number;
  tier: string;
  part: string;
  identity: string;
  session?: number;
}
interface PartStats {
  entries: number;
  bytes: number;
  budgetBytes: number;
  bodyBytes: number;
}
interface Stats {
  local: Record<'shared' | 'session', PartStats>;
  byModule: Record<string, { shared: number; session: number }>;
  workers: { worker: number; local: Record<'shared' | 'session', PartStats> }[];
  missedWorkers?: { worker: number; error: string }[];
}

describe.runIf(built)('admin inspection with workers', () => {
  let fake: FakeUpstream;
  let gw: SpawnedGateway;
  let file: string;
  const query = '/w/api.php?action=query&prop=info&titles=Main_Page&format=json';

  beforeAll(async () => {
    fake = await startFakeUpstream(answerPublicOrSessionPrivate(new Map()));
    file = path.join(scratchDir('wikiedge-admin-workers-'), 'wikiedge.yaml');
    writeFileSync(file, 'maxUrlBytes: 8192\n');
    gw = await spawnGateway(fake.url, { WIKIEDGE_WORKERS: '2', WIKIEDGE_CONFIG: file, WIKIEDGE_ADMIN_TOKEN: ADMIN_TOKEN });
  });
  afterAll(async () => {
    gw?.child.kill('SIGKILL');
    await gw?.exited;
    await fake?.close();
  });

  /** Ask on new connections until both workers have answered (the kernel picks the worker). */
  async function inBothWorkers(headers: Record<string, string>): Promise<void> {
    const workers = new Set<string>();
    for (let i = 0; i < 200 && workers.size < 2; i++) {
      const res = await http(`${gw.url}${query}`, { headers: { connection: 'close', ...headers } });
      expect(res.status).toBe(200);
      workers.add((header(res, 'x-request-id') ?? '').split('-')[0]!);
    }
    expect(workers.size).toBe(2);
  }

  it('GET /cache lists both workers’ copies, marked with the worker; a session has one number in both', async () => {
    await inBothWorkers({});
    await inBothWorkers({ cookie: COOKIE });
    const res = await adminGet(gw.adminUrl, `/cache?url=${encodeURIComponent('/w/api.php?titles=Main_Page&format=json&prop=info&action=query')}`);
    expect(res.status).toBe(200);
    const view = JSON.parse(res.body) as { url: string; variants: Variant[]; workers: number; missedWorkers?: unknown };
    expect(view.url).toBe('/w/api.php?action=query&format=json&prop=info&titles=Main_Page');
    expect(view.workers).toBe(2);
    expect(view.missedWorkers).toBeUndefined();
    const anonymous = view.variants.filter((v) => v.identity === 'anonymous');
    const sessions = view.variants.filter((v) => v.identity === 'session');
    expect(new Set(anonymous.map((v) => v.worker)).size).toBe(2);
    expect(new Set(sessions.map((v) => v.worker)).size).toBe(2);
    expect(sessions.map((v) => v.session)).toEqual([1, 1]);
    for (const v of view.variants) expect(v.tier).toBe('local');
    for (const secret of SECRETS) expect(res.body).not.toContain(secret);
    expect(res.body).not.toContain('slot');
  });

  it('GET /cache/stats sums the workers and lists each', async () => {
    const res = await adminGet(gw.adminUrl, '/cache/stats');
    expect(res.status).toBe(200);
    const stats = JSON.parse(res.body) as Stats;
    expect(stats.workers).toHaveLength(2);
    expect(stats.byModule['query+info']).toEqual({ shared: 2, session: 2 });
    for (const part of ['shared', 'session'] as const) {
      expect(stats.local[part].entries).toBe(2);
      for (const k of ['entries', 'bytes', 'budgetBytes', 'bodyBytes'] as const)
        expect(stats.local[part][k]).toBe(stats.workers[0]!.local[part][k] + stats.workers[1]!.local[part][k]);
    }
  });

  it('POST /trace runs in one worker and says which', async () => {
    const res = await adminPost(gw.adminUrl, `/trace?url=${encodeURIComponent(query)}`, { headers: { cookie: COOKIE } });
    expect(res.status).toBe(200);
    const trace = JSON.parse(res.body) as { worker: number; status: number; xCache: string; events: { step: string }[] };
    expect(typeof trace.worker).toBe('number');
    expect(trace.status).toBe(200);
    expect(trace.xCache).toBe('hit');
    expect(trace.events.map((e) => e.step)).toContain('lookup');
    for (const secret of SECRETS) expect(res.body).not.toContain(secret);
  });

  it('a worker that does not answer is listed as such, within the ask’s bound', async () => {
    // The primary's log lines go out in batches: wait for both.
    await untilLogged(gw, () => logged(gw, 'worker listening').length >= 2);
    const pids = logged(gw, 'worker listening').map((l) => ({ worker: l['worker'] as number, pid: l['pid'] as number }));
    expect(pids).toHaveLength(2);
    const stopped = pids[1]!;
    process.kill(stopped.pid, 'SIGSTOP');
    try {
      const res = await adminGet(gw.adminUrl, '/cache/stats');
      expect(res.status).toBe(200);
      const stats = JSON.parse(res.body) as Stats;
      expect(stats.workers.map((w) => w.worker)).toEqual([pids[0]!.worker]);
      expect(stats.missedWorkers).toEqual([{ worker: stopped.worker, error: `worker ${stopped.worker}: no answer within 5000 ms` }]);
      const cache = JSON.parse((await adminGet(gw.adminUrl, `/cache?url=${encodeURIComponent(query)}`)).body) as { workers: number; missedWorkers: unknown[] };
      expect(cache.workers).toBe(1);
      expect(cache.missedWorkers).toHaveLength(1);
    } finally {
      process.kill(stopped.pid, 'SIGCONT');
    }
  });

  it('after a SIGHUP, GET /config shows the new value and the new workers list what was handed over', async () => {
    const before = JSON.parse((await adminGet(gw.adminUrl, '/config')).body) as { config: Record<string, unknown> };
    expect(before.config['WIKIEDGE_MAX_URL_BYTES']).toBe(8192);
    expect(before.config['WIKIEDGE_ADMIN_TOKEN']).toBe('[redacted]');
    writeFileSync(file, 'maxUrlBytes: 4096\n');
    gw.child.kill('SIGHUP');
    await untilLogged(gw, () => logged(gw, 'reload complete').length === 1, 120_000);
    const after = await adminGet(gw.adminUrl, '/config');
    expect(after.status).toBe(200);
    expect((JSON.parse(after.body) as { config: Record<string, unknown> }).config['WIKIEDGE_MAX_URL_BYTES']).toBe(4096);
    expect(after.body).not.toContain(ADMIN_TOKEN);
    // The new workers answer GET /cache, with the shared entries handed over to them.
    const listed = JSON.parse((await adminGet(gw.adminUrl, `/cache?url=${encodeURIComponent(query)}`)).body) as { variants: Variant[]; workers: number };
    expect(listed.workers).toBe(2);
    const firstWorkers = logged(gw, 'worker listening')
      .slice(0, 2)
      .map((l) => l['worker']);
    const anonymous = listed.variants.filter((v) => v.identity === 'anonymous');
    expect(anonymous).toHaveLength(2);
    for (const v of anonymous) expect(firstWorkers).not.toContain(v.worker);
  });
});
