// PURGE is accepted only from the configured trusted addresses; others get 405 and evict nothing.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';

describe('PURGE from an untrusted address', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    // Loopback is not trusted here.
    gw = await startGateway(inject('wikiUrl'), { WIKIEDGE_TRUSTED_PROXIES: '192.0.2.10' });
  });
  afterAll(() => gw.close());

  it('gets 405 and the entry stays', async () => {
    const url = `${gw.apiUrl}?action=wbavailablebadges&format=json&requestid=${randomUUID()}`;
    await http(url);
    const purge = await http(url, { method: 'PURGE' });
    expect(purge.status).toBe(405);
    expect(header(await http(url), 'x-cache')).toBe('hit');
  });

  it('an absolute-form PURGE (as MediaWiki sends it through $wgCdnServers) is refused too', async () => {
    const res = await http(`${gw.url}/w/index.php/Main_Page`, { method: 'PURGE' });
    expect(res.status).toBe(405);
  });
});
