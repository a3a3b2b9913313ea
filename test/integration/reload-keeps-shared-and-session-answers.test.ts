// SIGHUP to the default deployment (WIKIEDGE_WORKERS=1) in front of the real wiki: what was cached
// before the reload, shared and per session, is a hit after it, the wiki never asked again, and
// each user still gets only their own answer (the session slots keep their key: the identity
// secret drawn at start is kept across the reload).
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { logged, untilLogged } from '../support/cluster-logs.js';
import { header, http } from '../support/http.js';
import { scratchDir } from '../support/scratch.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';
import { ADMIN_PASS, ADMIN_USER, LAB_USER, LAB_USER_PASS, loginCookies, upstreamRequestCount } from '../support/wiki.js';

const wiki = inject('wikiUrl');
const wikiData = inject('wikiData');
const reachedWiki = (id: string) => upstreamRequestCount(wikiData, (line) => line.includes(id));

describe.runIf(built)('a reload of the default deployment keeps the real wiki’s answers', () => {
  let gw: SpawnedGateway;
  let file: string;
  let admin: string;
  let user: string;
  beforeAll(async () => {
    file = path.join(scratchDir('wikiedge-reload-wiki-'), 'wikiedge.yaml');
    writeFileSync(file, 'maxUrlBytes: 8192\n');
    gw = await spawnGateway(wiki, { WIKIEDGE_CONFIG: file });
    [admin, user] = await Promise.all([loginCookies(wiki, ADMIN_USER, ADMIN_PASS), loginCookies(wiki, LAB_USER, LAB_USER_PASS)]);
  });
  afterAll(async () => {
    if (gw?.child.exitCode === null) {
      gw.child.kill('SIGTERM');
      await gw.exited;
    }
  });
  const api = (q: string, headers: Record<string, string> = {}) => http(`${gw.url}/w/api.php?${q}`, { headers });
  const whoami = (body: string) => (JSON.parse(body) as { query: { userinfo: { name: string } } }).query.userinfo.name;

  it('a shared hit and two users’ session hits before are the same hits after, for the same users only', async () => {
    const sharedId = randomUUID();
    const sessionId = randomUUID();
    const shared = `action=wbavailablebadges&format=json&requestid=${sharedId}`;
    const mine = `action=query&meta=userinfo&format=json&requestid=${sessionId}`;
    expect(header(await api(shared), 'x-cache')).toBe('miss');
    expect(header(await api(shared), 'x-cache')).toBe('hit');
    for (const cookie of [admin, user]) {
      expect(header(await api(mine, { cookie }), 'x-cache')).toBe('miss');
      expect(header(await api(mine, { cookie }), 'x-cache')).toBe('hit');
    }

    writeFileSync(file, 'maxUrlBytes: 4096\n');
    gw.child.kill('SIGHUP');
    await untilLogged(gw, () => logged(gw, 'reload complete').length === 1);
    expect(logged(gw, 'reload complete')[0]).toMatchObject({ changed: ['WIKIEDGE_MAX_URL_BYTES'], handedOver: { taken: 3 } });

    expect(header(await api(shared), 'x-cache')).toBe('hit');
    const [asAdmin, asUser, anonymous] = [await api(mine, { cookie: admin }), await api(mine, { cookie: user }), await api(mine)];
    expect([header(asAdmin, 'x-cache'), whoami(asAdmin.body)]).toEqual(['hit', ADMIN_USER]);
    expect([header(asUser, 'x-cache'), whoami(asUser.body)]).toEqual(['hit', LAB_USER]);
    expect(header(anonymous, 'x-cache')).toBe('pass');
    expect(await reachedWiki(sharedId)).toBe(1);
    // One per user before the reload, and the anonymous pass after it.
    expect(await reachedWiki(sessionId)).toBe(3);
    // The new configuration applies.
    expect((await api(`action=query&meta=siteinfo&format=json&pad=${'x'.repeat(5_000)}`)).status).toBe(414);
  });
});
