// SIGHUP to the default deployment (WIKIEDGE_WORKERS=1, one process) while clients keep sending,
// on kept-alive connections and on a new connection per request: every request is answered 200,
// none refused or failed; the configuration file's change and the <KEY>_FILE secret's new value
// apply; the cache is kept (what was a hit before is a hit after: the wiki is never asked for it
// again); the same process serves throughout, and a kept-alive client keeps its one connection.
//
// Outcomes are counted, never timed: the load runs until the reload has completed and every
// client has gone on sending after it, however long a busy machine takes.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { logged, untilLogged } from '../support/cluster-logs.js';
import type { FakeUpstream } from '../support/fake-upstream.js';
import { MANY_CLIENTS_FROM_LOOPBACK } from '../support/gateway.js';
import { http } from '../support/http.js';
import { hitPath, reloadWiki, startLoad } from '../support/reload-load.js';
import { scratchDir } from '../support/scratch.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';

const KEEP_ALIVE_CLIENTS = 12;
const NEW_CONNECTION_CLIENTS = 4;
const TOKEN_BEFORE = 'admin-token-before-0123456789';
const TOKEN_AFTER = 'admin-token-after-0123456789';

describe('SIGHUP to the default deployment under load', () => {
  let fake: FakeUpstream | undefined;
  let gw: SpawnedGateway | undefined;
  afterEach(async () => {
    if (gw && gw.child.exitCode === null && gw.child.signalCode === null) gw.child.kill('SIGKILL');
    await fake?.close();
  });

  it.runIf(built)('answers every request 200, applies the file and the secret, keeps the cache and the connections', async () => {
    const asked = new Map<string, number>();
    fake = await reloadWiki(asked);
    const dir = scratchDir('wikiedge-reload-single-');
    const file = path.join(dir, 'wikiedge.yaml');
    const tokenFile = path.join(dir, 'admin-token');
    writeFileSync(file, 'maxUrlBytes: 8192\n');
    writeFileSync(tokenFile, `${TOKEN_BEFORE}\n`);
    gw = await spawnGateway(fake.url, { ...MANY_CLIENTS_FROM_LOOPBACK, WIKIEDGE_CONFIG: file, WIKIEDGE_ADMIN_TOKEN_FILE: tokenFile });
    const g = gw;
    const longUrl = () => http(`${g.url}/w/api.php?action=query&meta=siteinfo&format=json&kind=pass&pad=${'x'.repeat(5_000)}`);
    const purgeWith = (token: string) =>
      http(`${g.adminUrl}/purge?all=1`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });

    // Before: the old limit and token, and every hit path cached once.
    expect((await longUrl()).status).toBe(200);
    expect((await purgeWith(TOKEN_BEFORE)).status).toBe(200);
    for (let c = 0; c < 5; c++) {
      expect((await http(`${g.url}${hitPath(c)}`)).headers['x-cache']).toBe('miss');
      expect((await http(`${g.url}${hitPath(c)}`)).headers['x-cache']).toBe('hit');
    }

    const { outcomes, phase, connections, done: load } = startLoad(g.url, { keepAlive: KEEP_ALIVE_CLIENTS, newConnections: NEW_CONNECTION_CLIENTS });
    // Every client has asked for its hit path (each third request) before the snapshot below.
    await untilLogged(g, () => Math.min(...phase.sentBy) >= 3);
    writeFileSync(file, 'maxUrlBytes: 4096\n');
    writeFileSync(tokenFile, `${TOKEN_AFTER}\n`);
    // Every variant of the hit paths is cached by now (the load's clients may send other headers than http()).
    const askedBefore = new Map(asked);
    g.child.kill('SIGHUP');
    await untilLogged(g, () => logged(g, 'reload complete').length === 1);
    phase.reloaded = true;
    await load;

    // Every request was answered, with a 200; each kept-alive client used one connection throughout.
    expect(outcomes.errors).toEqual({});
    expect(Object.keys(outcomes.statuses)).toEqual(['200']);
    expect(connections).toEqual({ opened: KEEP_ALIVE_CLIENTS, lost: 0 });
    // One line when it starts, one when it ends, saying what changed (never the token itself).
    expect(logged(g, /^reload: re-reading the configuration/)).toHaveLength(1);
    const complete = logged(g, 'reload complete')[0]!;
    expect(complete['changed']).toEqual(['WIKIEDGE_ADMIN_TOKEN', 'WIKIEDGE_MAX_URL_BYTES']);
    expect((complete['handedOver'] as { taken: number }).taken).toBeGreaterThanOrEqual(5);
    expect(g.stdout()).not.toContain(TOKEN_AFTER);
    // The cache was kept: no hit path was asked of the wiki again after the reload, and each is a hit still.
    for (let c = 0; c < 5; c++) {
      expect(asked.get(`hit ${c}`)).toBe(askedBefore.get(`hit ${c}`));
      expect((await http(`${g.url}${hitPath(c)}`)).headers['x-cache']).toBe('hit');
    }
    // The new configuration applies: the file's shorter URL limit, the secret file's new token.
    expect((await longUrl()).status).toBe(414);
    expect((await purgeWith(TOKEN_BEFORE)).status).toBe(401);
    expect((await purgeWith(TOKEN_AFTER)).status).toBe(200);

    g.child.kill('SIGTERM');
    expect(await g.exited).toBe(0);
    expect(g.stderr()).toBe('');
  });
});
