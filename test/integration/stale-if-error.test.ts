// The wiki goes away: stale answers are served within the stale-if-error window, then a
// MediaWiki-shaped 502.
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { startForwarder } from '../support/forwarder.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';

describe('stale if error', () => {
  let gw: RunningGateway | undefined;
  afterAll(() => gw?.close());

  it('serves stale within the window, then a 502 in MediaWiki’s shape', async () => {
    const forwarder = await startForwarder(inject('wikiUrl'));
    let clock = Date.now();
    gw = await startGateway(
      forwarder.url,
      {
        WIKIEDGE_TTL_PUBLIC_SECONDS: '5',
        WIKIEDGE_GRACE_SECONDS: '0',
        WIKIEDGE_STALE_IF_ERROR_SECONDS: '60',
      },
      { now: () => clock },
    );
    const q = `${gw.apiUrl}?action=query&meta=siteinfo&format=json&requestid=${randomUUID()}`;
    const fresh = await http(q);
    expect(header(fresh, 'x-cache')).toBe('miss');
    await forwarder.cut();

    clock += 10_000; // past the TTL, inside the stale-if-error window
    const stale = await http(q);
    expect(stale.status).toBe(200);
    expect(header(stale, 'x-cache')).toBe('stale');
    expect(stale.body).toBe(fresh.body);
    expect(Number(header(stale, 'age'))).toBeGreaterThanOrEqual(10);

    clock += 60_000; // past the window
    const gone = await http(q);
    expect(gone.status).toBe(502);
    // The forwarder accepts and drops connections: refused or reset, both a 502.
    expect(header(gone, 'mediawiki-api-error')).toMatch(/^wikiedge-upstream-(unreachable|reset)$/);
    expect(JSON.parse(gone.body).error.code).toBe(header(gone, 'mediawiki-api-error'));
    await forwarder.close();
  });

  it('serves stale in the grace window while one background refresh runs', async () => {
    const forwarder = await startForwarder(inject('wikiUrl'));
    let clock = Date.now();
    const g = await startGateway(forwarder.url, { WIKIEDGE_TTL_PUBLIC_SECONDS: '5', WIKIEDGE_GRACE_SECONDS: '30' }, { now: () => clock });
    try {
      // siprop=namespaces: the default siprop=general carries the wiki`s clock, which has no grace window.
      const q = `${g.apiUrl}?action=query&meta=siteinfo&siprop=namespaces&format=json&requestid=${randomUUID()}`;
      await http(q);
      clock += 6_000;
      const stale = await http(q);
      expect(header(stale, 'x-cache')).toBe('stale');
      // The refresh lands in the background; then it is a fresh hit again.
      for (let i = 0; i < 100 && g.built.gateway.coalescer.size > 0; i++) await new Promise((r) => setTimeout(r, 20));
      const hit = await http(q);
      expect(header(hit, 'x-cache')).toBe('hit');
      expect(Number(header(hit, 'age'))).toBe(0);
    } finally {
      await g.close();
      await forwarder.close();
    }
  });
});
