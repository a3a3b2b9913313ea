// POST /purge with pattern=: a glob whose only wildcard is `*`, over the URL key as GET /cache
// shows it (cache/url-match.ts); bounded, and nothing but `*` is special.
import { describe, expect, it } from 'vitest';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { ADMIN_TOKEN, adminPost, answerPublicOrSessionPrivate } from '../support/admin.js';
import { http } from '../support/http.js';

describe('admin purge by pattern', () => {
  const t = gatewayOnFake(answerPublicOrSessionPrivate(new Map()), { WIKIEDGE_ADMIN_TOKEN: ADMIN_TOKEN });
  const cache = async (query: string) => (await http(`${t.gw.apiUrl}?${query}`)).headers['x-cache'];

  it('removes every key the glob matches, and only those', async () => {
    const matched = ['action=query&prop=revisions&titles=Alpha&format=json', 'action=query&prop=info&titles=Alphabet&format=json'];
    const kept = ['action=query&prop=info&titles=Beta&format=json', 'action=query&prop=info&titles=Alpha&format=xml'];
    for (const q of [...matched, ...kept]) expect(await cache(q)).toBe('miss');
    const res = await adminPost(t.gw.adminUrl, '/purge', { pattern: '/w/api.php?action=query&format=json&*titles=Alpha*' });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ purged: 2 });
    for (const q of matched) expect(await cache(q)).toBe('miss');
    for (const q of kept) expect(await cache(q)).toBe('hit');
  });

  it('`?`, `[` and `\\` are literal: a pattern meaning a character class in other globs matches nothing here', async () => {
    expect(await cache('action=query&prop=info&titles=Gamma&format=json')).toBe('miss');
    const res = await adminPost(t.gw.adminUrl, '/purge', { pattern: '/w/api.php?action=query&format=json&prop=info&titles=[G]amma' });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ purged: 0, note: 'nothing matched: no entry was removed' });
    expect(await cache('action=query&prop=info&titles=Gamma&format=json')).toBe('hit');
  });

  it('a pattern of stars only, too many stars or too long: 400 saying why, nothing removed', async () => {
    for (const [pattern, error] of [
      ['**', 'pattern= matches every key: use all=1 to purge everything'],
      [`/w/api.php?${'a*'.repeat(9)}`, 'pattern= has 9 stars: at most 8'],
      [`/w/api.php?${'a'.repeat(1100)}*`, 'pattern= is longer than 1024 characters'],
    ]) {
      const res = await adminPost(t.gw.adminUrl, '/purge', { pattern });
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body)).toEqual({ error });
    }
    expect(await cache('action=query&prop=info&titles=Gamma&format=json')).toBe('hit');
  });
});
