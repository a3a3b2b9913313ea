// GET /cache/stats on the admin listener: entries and bytes of each part of the local tier, and
// entries by module label and part, counted from what the tier holds.
import { describe, expect, it } from 'vitest';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { ADMIN_TOKEN, adminGet, answerPublicOrSessionPrivate } from '../support/admin.js';
import { http } from '../support/http.js';

interface Stats {
  local: Record<'shared' | 'session', { entries: number; bytes: number; budgetBytes: number; bodyBytes: number }>;
  byModule: Record<string, { shared: number; session: number }>;
}

describe('GET /cache/stats', () => {
  const t = gatewayOnFake(answerPublicOrSessionPrivate(new Map()), { WIKIEDGE_ADMIN_TOKEN: ADMIN_TOKEN });

  it('counts entries by module and tier part as they are stored', async () => {
    const empty = JSON.parse((await adminGet(t.gw.adminUrl, '/cache/stats')).body) as Stats;
    expect(empty.local.shared.entries).toBe(0);
    expect(empty.byModule).toEqual({});

    for (const n of [1, 2, 3]) await http(`${t.gw.apiUrl}?action=query&prop=info&titles=P${n}&format=json`);
    await http(`${t.gw.apiUrl}?action=query&list=allpages&format=json`);
    await http(`${t.gw.apiUrl}?action=query&prop=info&titles=P1&format=json`, { headers: { cookie: 'wiki_session=cccccccccccccccccccccccccccccccc' } });

    const res = await adminGet(t.gw.adminUrl, '/cache/stats');
    expect(res.status).toBe(200);
    const stats = JSON.parse(res.body) as Stats;
    expect(stats.byModule).toEqual({ 'query+allpages': { shared: 1, session: 0 }, 'query+info': { shared: 3, session: 1 } });
    expect(stats.local.shared.entries).toBe(4);
    expect(stats.local.session.entries).toBe(1);
    expect(stats.local.shared.bytes).toBeGreaterThan(stats.local.shared.bodyBytes);
    expect(stats.local.shared.budgetBytes).toBe(t.gw.built.gateway.store.stats('shared').budget);
  });
});
