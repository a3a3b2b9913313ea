// Passwords through Sentinel, against real servers: a primary with requirepass, a Sentinel with
// its own requirepass (and the primary's as auth-pass). WIKIEDGE_REDIS_PASSWORD (from its _FILE
// here) reaches the data node, WIKIEDGE_REDIS_SENTINEL_PASSWORD the Sentinel, and the tier is up
// and stores; a wrong Sentinel password is a refusal at start naming its key.
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { type RedisProcess, startSentinel, startServer } from '../support/redis-topology.js';
import { scratchDir } from '../support/scratch.js';

const NAME = 'guarded';
const DATA_PASSWORD = 'data-node-password-0123';
const SENTINEL_PASSWORD = 'sentinel-password-0123';
const SECRET = { WIKIEDGE_IDENTITY_SECRET: 'redis-tests-share-this-identity-secret' };

describe.runIf(existsSync('/usr/bin/redis-server'))('Sentinel with passwords', () => {
  let fake: FakeUpstream;
  let primary: RedisProcess;
  let sentinel: RedisProcess;
  let passwordFile: string;

  beforeAll(async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=600, public' });
      res.end('{}');
    });
    primary = await startServer(['--requirepass', DATA_PASSWORD]);
    sentinel = await startSentinel(NAME, primary, undefined, [`requirepass ${SENTINEL_PASSWORD}`, `sentinel auth-pass ${NAME} ${DATA_PASSWORD}`]);
    passwordFile = path.join(scratchDir('wikiedge-redis-pw-'), 'password');
    writeFileSync(passwordFile, `${DATA_PASSWORD}\n`);
  }, 30_000);
  afterAll(async () => {
    await Promise.all([sentinel?.kill('SIGTERM'), primary?.kill('SIGTERM')]);
    await fake?.close();
  });

  const env = (sentinelPassword: string) => ({
    ...SECRET,
    WIKIEDGE_REDIS_SENTINELS: sentinel.address,
    WIKIEDGE_REDIS_SENTINEL_MASTER: NAME,
    WIKIEDGE_REDIS_PASSWORD_FILE: passwordFile,
    WIKIEDGE_REDIS_SENTINEL_PASSWORD: sentinelPassword,
    WIKIEDGE_REDIS_TIMEOUT_MS: '1000',
  });

  it('both passwords right: the tier is up and shares (a second gateway gets hit-shared)', async () => {
    const [a, b] = await Promise.all([startGateway(fake.url, env(SENTINEL_PASSWORD)), startGateway(fake.url, env(SENTINEL_PASSWORD))]);
    try {
      expect(a.logs.filter((l) => l['redis'] === 'up')).toHaveLength(1);
      const q = '?action=query&meta=siteinfo&format=json&t=passwords';
      expect(header(await http(`${a.apiUrl}${q}`), 'x-cache')).toBe('miss');
      // Its store runs after its answer (steps/flow.ts fetchAndStore).
      await a.built.gateway.afterAnswers.settled(10_000);
      expect(header(await http(`${b.apiUrl}${q}`), 'x-cache')).toBe('hit-shared');
      // The password is nowhere in what was logged.
      expect(JSON.stringify(a.logs)).not.toContain(DATA_PASSWORD);
      expect(JSON.stringify(a.logs)).not.toContain(SENTINEL_PASSWORD);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('a wrong Sentinel password refuses to start, naming WIKIEDGE_REDIS_SENTINEL_PASSWORD', async () => {
    const err = await startGateway(fake.url, env('not-the-sentinel-password')).then(
      async (gw) => {
        await gw.close();
        return undefined;
      },
      (e: unknown) => e as Error & { key?: string },
    );
    expect(err?.key).toBe('WIKIEDGE_REDIS_SENTINEL_PASSWORD');
    expect(err?.message).toMatch(new RegExp(`^the Sentinel ${sentinel.address} refuses WIKIEDGE_REDIS_SENTINEL_PASSWORD`));
  });
});
