// prom-client's default metrics (process_*, nodejs_*) are the process's; every gateway a reload
// of the default deployment built collected them again into its registry, which the generations
// then dropped (cluster/generations.ts), while the PerformanceObserver prom-client's GC metric
// makes on each collection stayed: every GC ran one more callback per reload, for good. Only the
// first gateway of a process collects them now (gateway/gateway.ts GatewayDeps.processMetrics).
import pino from 'pino';
import * as promClient from 'prom-client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { type Generation, Generations } from '../../src/cluster/generations.js';
import { ClusterMetrics, GENERATION_AGGREGATORS } from '../../src/cluster/metrics-aggregation.js';
import { answerPrivateEmptyJson } from '../support/gateway-on-fake.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';

const collections = vi.hoisted(() => ({ count: 0 }));
vi.mock('prom-client', async (original) => {
  const real = await original<typeof import('prom-client')>();
  return {
    ...real,
    collectDefaultMetrics: (...args: Parameters<typeof real.collectDefaultMetrics>) => {
      collections.count++;
      return real.collectDefaultMetrics(...args);
    },
  };
});

describe('reloads of the single process', () => {
  let wiki: FakeUpstream;
  let gens: Generations | undefined;
  const log = pino({ level: 'silent' });
  const config = () =>
    loadConfig({ WIKIEDGE_UPSTREAM: wiki.url, WIKIEDGE_HOST: '127.0.0.1', WIKIEDGE_PORT: '0', WIKIEDGE_ADMIN_PORT: '0', WIKIEDGE_SHUTDOWN_DRAIN_MS: '0' });

  beforeAll(async () => {
    wiki = await startFakeUpstream(answerPrivateEmptyJson);
  });
  afterAll(async () => {
    await gens?.close(config());
    await wiki?.close();
  });

  it('collect the process metrics once, and still expose them', async () => {
    const processMetrics = new promClient.Registry();
    const metrics = new ClusterMetrics<Generation>((g) => g.built.gateway.registry.getMetricsAsJSON(), log, new promClient.Registry(), GENERATION_AGGREGATORS);
    gens = await Generations.start(config(), log, metrics, processMetrics);
    const before = collections.count;
    expect(before).toBe(1);
    for (let i = 0; i < 5; i++) await gens.replace(config());
    expect(collections.count).toBe(before);
    expect(processMetrics.getSingleMetric('nodejs_gc_duration_seconds')).toBeDefined();
    expect(processMetrics.getSingleMetric('wikiedge_event_loop_lag_seconds')).toBeDefined();
  }, 60_000);
});
