// The background probe of the wiki: unknown until its first result, then up (a 200) or down
// (another status, a failure, no answer within the timeout); `wikiedge_upstream_up` and the probe
// metrics follow every probe; one log line and one onChange per change of state, not per probe.
import pino from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { UpstreamRequest, UpstreamResponse } from '../../src/upstream/upstream.js';
import { type ProbeResult, UpstreamProbe, UpstreamProbeMetrics } from '../../src/upstream/probe.js';

type Answer = number | Error | 'hang';

/** An upstream that answers each request with the next answer given. */
function upstreamAnswering(answers: Answer[]) {
  const asked: UpstreamRequest[] = [];
  return {
    asked,
    request(req: UpstreamRequest): Promise<UpstreamResponse> {
      asked.push(req);
      const next = answers.shift() ?? 200;
      if (next === 'hang') {
        return new Promise((_resolve, reject) => req.signal?.addEventListener('abort', () => reject(req.signal?.reason)));
      }
      if (next instanceof Error) return Promise.reject(next);
      return Promise.resolve({ statusCode: next, body: { dump: async () => undefined } } as unknown as UpstreamResponse);
    },
  };
}

function probeWith(answers: Answer[], timeoutMs = 1_000) {
  const registry = new Registry();
  const lines: { level: number; upstream?: string }[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const changes: ProbeResult[] = [];
  const upstream = upstreamAnswering(answers);
  const probe = new UpstreamProbe({
    upstream,
    apiPath: '/w/api.php',
    intervalMs: 60_000,
    timeoutMs,
    metrics: new UpstreamProbeMetrics(registry),
    log,
    onChange: (r) => changes.push(r),
  });
  const value = async (name: string) => (await registry.getSingleMetricAsString(name)).split('\n').filter((l) => !l.startsWith('#'));
  return { probe, upstream, lines, changes, value };
}

describe('the upstream probe', () => {
  it('is unknown before its first probe, and asks api.php for the cheapest answer', async () => {
    const { probe, upstream, value } = probeWith([200]);
    expect(probe.state).toBe('unknown');
    expect(await value('wikiedge_upstream_up')).toEqual(['wikiedge_upstream_up 0']);
    await probe.probeOnce();
    expect(probe.state).toBe('up');
    expect(upstream.asked[0]).toMatchObject({ method: 'GET', path: '/w/api.php?action=query&format=json' });
    expect(upstream.asked[0]!.headers['user-agent']).toBe('wikiedge-upstream-probe');
  });

  it.each([
    [503, 'status'],
    [Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), 'unreachable'],
    [Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }), 'reset'],
    ['hang' as const, 'timeout'],
  ])('%s is down (%s)', async (answer, result) => {
    const { probe, value } = probeWith([answer], 20);
    const r = await probe.probeOnce();
    expect(r).toMatchObject({ up: false, result });
    expect(probe.state).toBe('down');
    expect(await value('wikiedge_upstream_up')).toEqual(['wikiedge_upstream_up 0']);
    // Every result is exported from 0; only this one counted.
    const probes = await value('wikiedge_upstream_probes_total');
    expect(probes).toHaveLength(6);
    expect(probes.filter((l) => !l.endsWith(' 0'))).toEqual([`wikiedge_upstream_probes_total{result="${result}"} 1`]);
  });

  it('says a change of state once: one line and one onChange per change, not per probe', async () => {
    const { probe, lines, changes, value } = probeWith([200, 200, 503, 503, 200]);
    for (let i = 0; i < 5; i++) await probe.probeOnce();
    expect(changes.map((c) => c.up)).toEqual([true, false, true]);
    expect(lines.map((l) => [l.level, l.upstream])).toEqual([
      [30, 'up'],
      [40, 'down'],
      [30, 'up'],
    ]);
    expect(await value('wikiedge_upstream_up')).toEqual(['wikiedge_upstream_up 1']);
    expect(await value('wikiedge_upstream_probes_total')).toEqual([
      'wikiedge_upstream_probes_total{result="up"} 3',
      'wikiedge_upstream_probes_total{result="status"} 2',
      'wikiedge_upstream_probes_total{result="unreachable"} 0',
      'wikiedge_upstream_probes_total{result="reset"} 0',
      'wikiedge_upstream_probes_total{result="bad_response"} 0',
      'wikiedge_upstream_probes_total{result="timeout"} 0',
    ]);
    // The last probe's duration was set (the gauge starts at 0), within the probe's timeout.
    const [duration] = await value('wikiedge_upstream_probe_duration_seconds');
    const seconds = Number(duration!.split(' ')[1]);
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThan(1);
  });

  it('start probes at once; stop waits for the probe under way and ends the schedule', async () => {
    const { probe, upstream } = probeWith([200]);
    probe.start();
    probe.start(); // twice changes nothing
    await probe.stop();
    expect(upstream.asked).toHaveLength(1);
    expect(probe.state).toBe('up');
  });
});
