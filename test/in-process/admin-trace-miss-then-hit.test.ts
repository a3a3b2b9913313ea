// POST /trace on the admin listener runs one request through the public app and answers with
// its decisions, like varnishlog for one transaction: recv, key, lookup, fetch, verdict, deliver
// for a miss; recv, key, lookup (fresh), deliver for the hit that follows.
import { describe, expect, it } from 'vitest';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { ADMIN_TOKEN, adminPost, answerPublicOrSessionPrivate } from '../support/admin.js';

interface Event {
  step: string;
  atMs: number;
  [fact: string]: unknown;
}
interface TraceView {
  status: number;
  xCache: string;
  events: Event[];
}

describe('POST /trace', () => {
  const asked = new Map<string, number>();
  const t = gatewayOnFake(answerPublicOrSessionPrivate(asked), { WIKIEDGE_ADMIN_TOKEN: ADMIN_TOKEN });
  const url = '/w/api.php?titles=Traced&action=query&prop=info&format=json';

  it('a miss: the key, nothing held, the wiki asked, the answer stored with its TTL and tags', async () => {
    const res = await adminPost(t.gw.adminUrl, '/trace', { url });
    expect(res.status).toBe(200);
    const trace = JSON.parse(res.body) as TraceView;
    expect(trace).toMatchObject({ status: 200, xCache: 'miss' });
    expect(trace.events.map((e) => e.step)).toEqual(['recv', 'recv', 'key', 'lookup', 'fetch', 'verdict', 'deliver']);
    const step = (name: string) => trace.events.filter((e) => e.step === name).at(-1)!;
    expect(step('recv')).toMatchObject({ module: 'query+info', identity: 'anonymous' });
    expect(step('key')).toMatchObject({ url: '/w/api.php?action=query&format=json&prop=info&titles=Traced', tier: 'shared' });
    expect(step('lookup')).toMatchObject({ local: 'none' });
    expect(step('fetch')['upstreamMs']).toBeTypeOf('number');
    expect(step('verdict')).toMatchObject({ stored: true, ttlSeconds: 300, codings: ['identity'] });
    expect(step('verdict')['dependencies']).toContain('p:Traced');
    expect(step('deliver')).toMatchObject({ status: 200, disposition: 'miss' });
    const times = trace.events.map((e) => e.atMs);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(asked.get('titles=Traced&action=query&prop=info&format=json&smaxage=4242424')).toBe(1);
  });

  it('the same request again: a fresh entry found, no fetch, a hit', async () => {
    const trace = JSON.parse((await adminPost(t.gw.adminUrl, '/trace', { url })).body) as TraceView;
    expect(trace).toMatchObject({ status: 200, xCache: 'hit' });
    expect(trace.events.map((e) => e.step)).toEqual(['recv', 'recv', 'key', 'lookup', 'verdict', 'deliver']);
    expect(trace.events.find((e) => e.step === 'lookup')).toMatchObject({ local: 'fresh', ttlSeconds: 300 });
    expect(trace.events.find((e) => e.step === 'verdict')).toMatchObject({ stored: false, servedFrom: 'hit' });
    expect(asked.get('titles=Traced&action=query&prop=info&format=json&smaxage=4242424')).toBe(1);
  });

  it('a session’s request: its identity kind, never its cookie', async () => {
    const cookie = 'wiki_session=dddddddddddddddddddddddddddddddd';
    const res = await adminPost(t.gw.adminUrl, '/trace', { url, headers: { cookie } });
    const trace = JSON.parse(res.body) as TraceView;
    expect(trace.events.find((e) => e.step === 'key')).toMatchObject({ tier: 'session', identity: 'session' });
    expect(res.body).not.toContain('dddddddddddddddd');
    expect(res.body).not.toContain('wiki_session');
  });

  it('a session whose user is known: its answer depends on the user, who is not named', async () => {
    const cookie = 'wiki_session=eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';
    const first = JSON.parse((await adminPost(t.gw.adminUrl, '/trace', { url, headers: { cookie } })).body) as TraceView;
    expect(first.xCache).toBe('miss');
    await t.gw.built.gateway.afterAnswers.settled(10_000);
    const key = '/w/api.php?action=query&format=json&prop=info&titles=Traced';
    const slots = t.gw.built.gateway.store.variants(key).flatMap((v) => /\ns:([^\n]*):[^\n:]*\n/.exec(v.key)?.[1] ?? []);
    for (const slot of slots) t.gw.built.gateway.sessionUsers.note(slot, 'Eve Example');
    const traced = `${url}&again=1`;
    const res = await adminPost(t.gw.adminUrl, '/trace', { url: traced, headers: { cookie } });
    const trace = JSON.parse(res.body) as TraceView;
    expect(trace.events.find((e) => e.step === 'key')).toMatchObject({ tier: 'session', identity: 'user' });
    expect(trace.events.filter((e) => e.step === 'verdict').at(-1)!['dependencies']).toContain('u:(the session`s user)');
    expect(res.body).not.toContain('Eve Example');
  });

  it('what cannot be traced: 400 saying why', async () => {
    const none = await adminPost(t.gw.adminUrl, '/trace', {});
    expect(none.status).toBe(400);
    expect(JSON.parse(none.body)).toEqual({ error: 'give url=<a request target of the public listener> (/w/api.php?…)' });
    const post = await adminPost(t.gw.adminUrl, '/trace', { url, method: 'POST' });
    expect(post.status).toBe(400);
  });
});
