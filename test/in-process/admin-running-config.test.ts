// GET /config on the admin listener: the configuration the process runs with, by environment
// key, secrets redacted (config/render.ts), a Redis password in a URL too.
import { describe, expect, it } from 'vitest';
import { gatewayOnFake, answerPrivateEmptyJson } from '../support/gateway-on-fake.js';
import { ADMIN_TOKEN, adminGet } from '../support/admin.js';

const METRICS_TOKEN = 'metrics-token-never-shown-0123456789';

describe('GET /config', () => {
  const t = gatewayOnFake(answerPrivateEmptyJson, {
    WIKIEDGE_ADMIN_TOKEN: ADMIN_TOKEN,
    WIKIEDGE_METRICS_TOKEN: METRICS_TOKEN,
    WIKIEDGE_TTL_PUBLIC_SECONDS: '123',
  });

  it('shows every key with its running value, and no secret', async () => {
    const res = await adminGet(t.gw.adminUrl, '/config');
    expect(res.status).toBe(200);
    const { config } = JSON.parse(res.body) as { config: Record<string, unknown> };
    expect(config['WIKIEDGE_TTL_PUBLIC_SECONDS']).toBe(123);
    expect(config['WIKIEDGE_UPSTREAM']).toBe(t.fake.url);
    expect(config['WIKIEDGE_ADMIN_TOKEN']).toBe('[redacted]');
    expect(config['WIKIEDGE_METRICS_TOKEN']).toBe('[redacted]');
    expect(res.body).not.toContain(ADMIN_TOKEN);
    expect(res.body).not.toContain(METRICS_TOKEN);
  });

  it('is not shown without the token', async () => {
    const res = await adminGet(t.gw.adminUrl, '/config', 'not-the-admin-token-0123456789');
    expect(res.status).toBe(401);
    expect(res.body).not.toContain('WIKIEDGE_UPSTREAM');
  });
});
