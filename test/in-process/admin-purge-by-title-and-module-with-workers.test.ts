// WIKIEDGE_WORKERS=2: the primary answers the same 400s and does the same purges as a single
// process. module= is checked against the module table and WIKIEDGE_MODULES (the primary has the
// configuration); title= is read with the namespaces a worker learned from the wiki
// (upstream/site-namespaces.ts), here a wiki whose Template namespace is called Vorlage: with
// MediaWiki's default namespaces `Template:Foo` would be a main-namespace page and purge nothing.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, adminPost } from '../support/admin.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { header, http } from '../support/http.js';
import { built, spawnGateway, type SpawnedGateway } from '../support/spawned.js';

/** `meta=siteinfo&siprop=namespaces|namespacealiases` of a German-language wiki (formatversion 2). */
const SITEINFO = {
  batchcomplete: true,
  query: {
    namespaces: {
      '0': { id: 0, name: '', canonical: '' },
      '1': { id: 1, name: 'Diskussion', canonical: 'Talk' },
      '10': { id: 10, name: 'Vorlage', canonical: 'Template' },
      '11': { id: 11, name: 'Vorlage Diskussion', canonical: 'Template talk' },
    },
    namespacealiases: [],
  },
};
const QUERY = '/w/api.php?action=query&prop=info&titles=Vorlage:Foo&format=json';

describe.runIf(built)('admin purge by title and module with workers', () => {
  let fake: FakeUpstream;
  let gw: SpawnedGateway;
  let namespacesAsked = 0;

  beforeAll(async () => {
    fake = await startFakeUpstream((req: IncomingMessage, res: ServerResponse) => {
      const learning = (req.url ?? '').includes('siprop=namespaces');
      if (learning) namespacesAsked++;
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=600, max-age=600, public' });
      res.end(JSON.stringify(learning ? SITEINFO : { batchcomplete: true, query: { pages: [{ ns: 10, title: 'Vorlage:Foo', missing: true }] } }));
    });
    gw = await spawnGateway(fake.url, {
      WIKIEDGE_WORKERS: '2',
      WIKIEDGE_ADMIN_TOKEN: ADMIN_TOKEN,
      WIKIEDGE_MODULES: JSON.stringify({ cirrusdump: { ttlSeconds: 60 } }),
    });
  });
  afterAll(async () => {
    gw?.child.kill('SIGKILL');
    await gw?.exited;
    await fake?.close();
  });

  it('module=nosuchmodule is a 400 saying why; a module of WIKIEDGE_MODULES is purged', async () => {
    const refused = await adminPost(gw.adminUrl, '/purge', { module: 'nosuchmodule' });
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.body)).toEqual({
      error: "module=nosuchmodule is not a module of MediaWiki 1.39 or Wikibase, nor one named in WIKIEDGE_MODULES (an extension's module: purge by pattern=)",
    });
    for (const module of ['cirrusdump', 'wbgetentities']) expect((await adminPost(gw.adminUrl, '/purge', { module })).status).toBe(200);
  });

  it('title= in the canonical namespace name purges the page the wiki names Vorlage:Foo, in both workers', async () => {
    // Both workers have asked the wiki for its namespaces (each asks once at start).
    for (const deadline = Date.now() + 30_000; namespacesAsked < 2; ) {
      if (Date.now() > deadline) throw new Error(`the workers asked for the namespaces ${namespacesAsked} times`);
      await new Promise((r) => setTimeout(r, 25));
    }
    const workers = new Set<string>();
    for (let i = 0; i < 200 && workers.size < 2; i++) {
      const res = await http(`${gw.url}${QUERY}`, { headers: { connection: 'close' } });
      expect(res.status).toBe(200);
      workers.add((header(res, 'x-request-id') ?? '').split('-')[0]!);
    }
    expect(workers.size).toBe(2);

    const res = await adminPost(gw.adminUrl, '/purge', { title: 'Template:Foo' });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ purged: 2, workers: 2, missedWorkers: 0 });
  });
});
