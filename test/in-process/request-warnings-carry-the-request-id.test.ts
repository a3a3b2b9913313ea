// A warning a request logs (here the gateway error of a wiki that cannot be reached) carries the
// request's id, the one its answer says in X-Request-Id, though request.log's child logger is
// only made when the request logs (observe/logging.ts lazyRequestLogger); an answered request
// logs its access line alone.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { closedPort } from '../support/fake-upstream.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';

describe('request warnings', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(`http://127.0.0.1:${await closedPort()}`);
  });
  afterAll(() => gw.close());

  it('carry the id of the request that logged them', async () => {
    const res = await fetch(`${gw.apiUrl}?action=query&meta=siteinfo&format=json`);
    expect(res.status).toBe(502);
    const id = res.headers.get('x-request-id');
    expect(id).toBeTruthy();
    await vi.waitFor(() => expect(gw.logs.find((l) => l.msg === 'gateway error')).toBeDefined(), { timeout: 5_000 });
    const warning = gw.logs.find((l) => l.msg === 'gateway error')!;
    expect(warning).toMatchObject({ level: 40, service: 'wikiedge', reqId: id, code: 'wikiedge-upstream-unreachable' });
  });
});
