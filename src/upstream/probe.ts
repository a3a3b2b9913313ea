/**
 * The wiki's health, asked in the background: every WIKIEDGE_UPSTREAM_PROBE_MS one GET of
 * api.php (`action=query&format=json`, the cheapest answer MediaWiki gives), given at most
 * WIKIEDGE_UPSTREAM_PROBE_TIMEOUT_MS. Its result becomes `wikiedge_upstream_up` and the admin
 * `/upstreamz`, and a log line when it changes.
 *
 * It is not readiness. `/readyz` says whether this gateway can serve (apps/admin.ts); a wiki that is
 * down is exactly when a gateway must stay in its load balancer, serving what it has within the
 * stale-if-error window, as Varnish keeps serving grace. Were readiness tied to the wiki, every
 * replica would go unready at once and that window would never reach a client. Probes of the
 * admin listener read the last result here, so they never wait on the network.
 *
 * One prober per machine: a single process runs its own, a cluster's primary runs one for all
 * its workers (they share the wiki's address and configuration). Its metrics are registered on
 * the registry it is given (prom-client: never the global one).
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from 'pino';
import { failureKind, fromUpstreamFailure, type UpstreamFailureKind } from '../words/errors.js';
import type { UpstreamRequest, UpstreamResponse } from './upstream.js';

/** What a probe found: the wiki answered 200, answered something else, or failed. */
export type ProbeResultKind = 'up' | 'status' | UpstreamFailureKind;
/** Every result, so each label value is exported from 0 before it first happens. */
const PROBE_RESULTS = ['up', 'status', 'unreachable', 'reset', 'bad_response', 'timeout'] as const satisfies readonly ProbeResultKind[];

export interface ProbeResult {
  readonly up: boolean;
  readonly result: ProbeResultKind;
  /** The wiki's status, when it answered. */
  readonly status?: number;
  readonly durationMs: number;
  /** When the probe ended (ms since the epoch). */
  readonly at: number;
}

/** The metrics of the probe, on the registry given. */
export class UpstreamProbeMetrics {
  readonly up: Gauge;
  readonly duration: Gauge;
  readonly probes: Counter<'result'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.up = new Gauge({
      name: 'wikiedge_upstream_up',
      help: "1 when the last background probe of the wiki's api.php got a 200 within WIKIEDGE_UPSTREAM_PROBE_TIMEOUT_MS, else 0 (0 until the first probe ends).",
      registers,
    });
    this.duration = new Gauge({
      name: 'wikiedge_upstream_probe_duration_seconds',
      help: 'How long the last background probe of the wiki took (up to WIKIEDGE_UPSTREAM_PROBE_TIMEOUT_MS).',
      registers,
    });
    this.probes = new Counter({
      name: 'wikiedge_upstream_probes_total',
      help: 'Background probes of the wiki by result: up (200), status (another status), unreachable, reset, bad_response, timeout.',
      labelNames: ['result'] as const,
      registers,
    });
    for (const result of PROBE_RESULTS) this.probes.inc({ result }, 0);
  }
}

export interface UpstreamProbeOptions {
  /** The wiki's client (upstream/upstream.ts). */
  readonly upstream: { request(req: UpstreamRequest): Promise<UpstreamResponse> };
  readonly apiPath: string;
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly metrics: UpstreamProbeMetrics;
  readonly log: Logger;
  /** Clock in ms since the epoch; injected so tests control time. */
  readonly now?: () => number;
  /** Called after each probe whose result changed the state (the first one included). */
  readonly onChange?: (result: ProbeResult) => void;
}

export type UpstreamState = 'unknown' | 'up' | 'down';

export class UpstreamProbe {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<ProbeResult> | undefined;
  private stopped = true;
  private latest: ProbeResult | undefined;
  private readonly now: () => number;

  constructor(private readonly options: UpstreamProbeOptions) {
    this.now = options.now ?? Date.now;
  }

  /** `unknown` until the first probe has ended. */
  get state(): UpstreamState {
    return this.latest === undefined ? 'unknown' : this.latest.up ? 'up' : 'down';
  }

  /** The last probe's result, for /upstreamz. */
  get last(): ProbeResult | undefined {
    return this.latest;
  }

  /** Probe at once, then every intervalMs after the end of the previous probe. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.tick();
  }

  /** No more probes; waits for the one under way, if any. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One probe, recorded. */
  async probeOnce(): Promise<ProbeResult> {
    this.running = this.ask();
    const result = await this.running;
    this.running = undefined;
    this.record(result);
    return result;
  }

  private async tick(): Promise<void> {
    await this.probeOnce();
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), this.options.intervalMs);
    // The probe never keeps a process alive that has nothing else to do.
    this.timer.unref();
  }

  private async ask(): Promise<ProbeResult> {
    const { upstream, apiPath, timeoutMs } = this.options;
    const started = performance.now();
    const done = (result: ProbeResultKind, status?: number): ProbeResult => ({
      up: result === 'up',
      result,
      ...(status !== undefined && { status }),
      durationMs: performance.now() - started,
      at: this.now(),
    });
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const res = await upstream.request({
        method: 'GET',
        path: `${apiPath}?action=query&format=json`,
        headers: { 'user-agent': 'wikiedge-upstream-probe' },
        signal,
      });
      await res.body.dump();
      return done(res.statusCode === 200 ? 'up' : 'status', res.statusCode);
    } catch (err) {
      return done(signal.aborted ? 'timeout' : failureKind(fromUpstreamFailure(err)));
    }
  }

  private record(result: ProbeResult): void {
    const { metrics, log, onChange } = this.options;
    const before = this.state;
    this.latest = result;
    metrics.up.set(result.up ? 1 : 0);
    metrics.duration.set(result.durationMs / 1000);
    metrics.probes.inc({ result: result.result });
    if (this.state === before) return;
    const fields = { upstream: this.state, result: result.result, status: result.status, durationMs: Math.round(result.durationMs) };
    if (result.up) log.info(fields, 'upstream probe: the wiki answers');
    else log.warn(fields, 'upstream probe: the wiki does not answer (readiness is unaffected: cached answers are still served)');
    onChange?.(result);
  }
}
