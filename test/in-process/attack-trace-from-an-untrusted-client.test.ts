// An untrusted client tries to trace a request, or to read a trace or the cache: the public
// listener follows no trace a client names (only one the admin opened, by a random name it never
// shows) and no public answer carries one; the admin listener's trace and inspection routes
// need its token.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { ADMIN_TOKEN, adminGet, adminPost, answerPublicOrSessionPrivate } from '../support/admin.js';
import { http } from '../support/http.js';

describe('attack: a trace from an untrusted client', () => {
  const seenByTheWiki: (string | undefined)[] = [];
  const answer = answerPublicOrSessionPrivate(new Map());
  const t = gatewayOnFake(
    (req: IncomingMessage, res: ServerResponse) => {
      seenByTheWiki.push(req.headers['x-wikiedge-trace'] as string | undefined);
      answer(req, res);
    },
    { WIKIEDGE_ADMIN_TOKEN: ADMIN_TOKEN },
  );
  const url = '/w/api.php?action=query&prop=info&titles=Attack&format=json';

  it('the header on the public listener traces nothing, is answered like any request, and never reaches the wiki', async () => {
    for (const [i, value] of ['1', 'true', ADMIN_TOKEN, 'x'.repeat(32)].entries()) {
      const res = await http(`${t.gw.url}${url}&v=${i}`, { headers: { 'x-wikiedge-trace': value } });
      expect(res.status).toBe(200);
      expect(Object.keys(res.headers).filter((h) => h.includes('trace'))).toEqual([]);
      expect(res.body).not.toContain('"step"');
      expect(res.body).not.toContain('"events"');
    }
    expect(seenByTheWiki).toHaveLength(4);
    expect(seenByTheWiki.every((h) => h === undefined)).toBe(true);
  });

  it('POST /trace without the admin token: 401, no request run', async () => {
    const before = seenByTheWiki.length;
    for (const token of ['', 'guess-of-the-admin-token-012345']) {
      const res = await http(`${t.gw.adminUrl}/trace?url=${encodeURIComponent(`${url}&t=unauth`)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
      });
      expect(res.status).toBe(401);
      expect(res.body).not.toContain('"events"');
    }
    expect(seenByTheWiki.length).toBe(before);
  });

  it('GET /cache and /cache/stats without the admin token: 401', async () => {
    await adminPost(t.gw.adminUrl, '/trace', { url });
    for (const path of [`/cache?url=${encodeURIComponent(url)}`, '/cache/stats']) {
      const res = await adminGet(t.gw.adminUrl, path, 'guess-of-the-admin-token-012345');
      expect(res.status).toBe(401);
      expect(res.body).not.toContain('variants');
      expect((await http(`${t.gw.adminUrl}${path}`)).status).toBe(401);
    }
  });
});
