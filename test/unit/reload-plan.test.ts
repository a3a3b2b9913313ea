// What a reload changes (the keys whose value differs), or the key that refuses it: the bound
// listeners and the number of workers change only with a restart. The identity secret drawn at
// each load is not a change; a configured one that changes is.
import { describe, expect, it } from 'vitest';
import { loadConfigWithOrigins } from '../../src/config/config.js';
import { FIXED_ON_RELOAD, reloadPlan } from '../../src/cluster/reload.js';

const base = { WIKIEDGE_UPSTREAM: 'http://wiki:80', WIKIEDGE_WORKERS: '2' };
const load = (env: Record<string, string> = {}) => loadConfigWithOrigins({ ...base, ...env });

describe('reloadPlan', () => {
  it('changes nothing when nothing changed (the drawn identity secret included)', () => {
    expect(reloadPlan(load(), load())).toEqual({ changed: [] });
  });

  it('lists the keys whose value changed, by value, not by spelling', () => {
    const before = load({ WIKIEDGE_MODULES: '{"parse":{"pass":true}}', WIKIEDGE_TRUSTED_PROXIES: '10.0.0.0/8' });
    const after = load({
      WIKIEDGE_MODULES: '{ "parse": { "pass": true } }',
      WIKIEDGE_TRUSTED_PROXIES: '10.0.0.0/8, 192.168.0.0/16',
      WIKIEDGE_LOG_HITS: 'false',
    });
    expect(reloadPlan(before, after)).toEqual({ changed: ['logHits', 'trustedProxies'] });
    expect(reloadPlan(load({ WIKIEDGE_UPSTREAM: 'http://wiki:80' }), load({ WIKIEDGE_UPSTREAM: 'http://wiki2:80' }))).toEqual({ changed: ['upstream'] });
  });

  it('sees a configured secret change', () => {
    const before = load({ WIKIEDGE_IDENTITY_SECRET: 'identity-secret-one-0123' });
    expect(reloadPlan(before, load({ WIKIEDGE_IDENTITY_SECRET: 'identity-secret-two-0123' }))).toEqual({ changed: ['identitySecret'] });
    expect(reloadPlan(before, load())).toEqual({ changed: ['identitySecret'] });
  });

  it.each([
    ['WIKIEDGE_HOST', '127.0.0.1', 'host'],
    ['WIKIEDGE_PORT', '9000', 'port'],
    ['WIKIEDGE_ADMIN_HOST', '127.0.0.2', 'adminHost'],
    ['WIKIEDGE_ADMIN_PORT', '9001', 'adminPort'],
    ['WIKIEDGE_WORKERS', '3', 'workers'],
  ])('refuses a change of %s', (env, value, key) => {
    expect(reloadPlan(load(), load({ [env]: value, WIKIEDGE_GRACE_SECONDS: '5' }))).toEqual({ refused: key });
  });

  it('fixes exactly the listeners, the number of workers and the log format', () => {
    expect(FIXED_ON_RELOAD).toEqual(['host', 'port', 'adminHost', 'adminPort', 'workers', 'logFormat']);
  });
});
