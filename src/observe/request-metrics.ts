/**
 * wikiedge_requests_total, wikiedge_request_duration_seconds and wikiedge_response_bytes_total,
 * at the cost of a few additions per request.
 *
 * prom-client's inc() and observe() hash their label object and validate it on every call:
 * ~0.5-1 µs each (measured on these machines), when a whole cache hit has ~20 µs. Here each
 * label combination gets one cell, found once (the hit path keeps its cell), holding plain
 * numbers; the two metrics are read from the cells when Prometheus scrapes. They are registered
 * in the same prom-client Registry and exported in its format (the Registry reads a metric through
 * name, help, type, aggregator and get(), the same contract its own Counter and Histogram meet),
 * so /metrics, the cluster aggregation and the dashboards see no difference.
 *
 * Label values are bounded by the caller (dispositions, module labels, methods) and here (status
 * codes: codeLabel).
 */
import type { Metric, Registry } from 'prom-client';
import { DISPOSITIONS, type Disposition } from '../words/outcomes.js';

/** Seconds; the histogram's upper bounds (le), same as before the tally existed. */
export const REQUEST_DURATION_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10] as const;

/** What prom-client's Registry reads from a metric's get() (the shape its own metrics return). */
interface ExportedValue {
  readonly metricName?: string;
  readonly labels: Readonly<Record<string, string | number>>;
  readonly value: number;
}
interface Exported {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly aggregator: 'sum';
  readonly values: ExportedValue[];
}

export interface RequestLabels {
  readonly disposition: Disposition;
  readonly module: string;
  readonly method: string;
  readonly status_class: string;
  /** The status code itself, from a closed set (codeLabel). */
  readonly code: string;
}

/** One label combination's count; the duration cell is shared by every cell of a disposition. */
export interface RequestCell {
  readonly labels: RequestLabels;
  count: number;
  readonly duration: DurationCell;
}

interface DurationCell {
  readonly disposition: Disposition;
  /** Per bucket (not cumulative); the last slot is above the largest bound (+Inf only). */
  readonly counts: Float64Array;
  sum: number;
  count: number;
  /** Bytes written to clients for this disposition's answers (wikiedge_response_bytes_total). */
  bytes: number;
}

export class RequestTally {
  private readonly cells = new Map<string, RequestCell>();
  private readonly durations = new Map<Disposition, DurationCell>();

  constructor(registry: Registry) {
    // The Registry reads these through the same calls as its own metrics (see the module comment).
    registry.registerMetric(this.counterMetric() as unknown as Metric);
    registry.registerMetric(this.histogramMetric() as unknown as Metric);
    registry.registerMetric(this.bytesMetric() as unknown as Metric);
  }

  /** The cell for these labels; callers on a hot path keep it. */
  cell(disposition: Disposition, module: string, method: string, status: number): RequestCell {
    const code = codeLabel(status);
    // An `other` code is keyed by its class: 299 and 599 are two series, not one that says 2xx.
    const id = `${disposition}\u0000${module}\u0000${method}\u0000${code === 'other' ? statusClassOf(status) : code}`;
    let cell = this.cells.get(id);
    if (!cell) {
      const labels = { disposition, module, method, status_class: statusClassOf(status), code };
      cell = { labels, count: 0, duration: this.durationCell(disposition) };
      this.cells.set(id, cell);
    }
    return cell;
  }

  /** One request: counted, its duration observed, the bytes written for it added. */
  record(cell: RequestCell, seconds: number, bytesSent = 0): void {
    cell.count++;
    const d = cell.duration;
    let i = 0;
    while (i < REQUEST_DURATION_BUCKETS.length && seconds > REQUEST_DURATION_BUCKETS[i]!) i++;
    d.counts[i]!++;
    d.sum += seconds;
    d.count++;
    d.bytes += bytesSent;
  }

  private durationCell(disposition: Disposition): DurationCell {
    let d = this.durations.get(disposition);
    if (!d) {
      d = { disposition, counts: new Float64Array(REQUEST_DURATION_BUCKETS.length + 1), sum: 0, count: 0, bytes: 0 };
      this.durations.set(disposition, d);
    }
    return d;
  }

  /** Every disposition, from the start: a counter whose series appears late loses its first increase to rate(). */
  private bytesMetric() {
    const durations = this.durations;
    return {
      name: 'wikiedge_response_bytes_total',
      help: 'Bytes written to clients (status line, headers and body, as counted by the socket), by disposition.',
      type: 'counter' as const,
      aggregator: 'sum' as const,
      async get(): Promise<Exported> {
        const values = DISPOSITIONS.map((disposition) => ({ labels: { disposition }, value: durations.get(disposition)?.bytes ?? 0 }));
        return { name: this.name, help: this.help, type: 'counter', aggregator: 'sum', values };
      },
      reset() {
        for (const d of durations.values()) d.bytes = 0;
      },
    };
  }

  private counterMetric() {
    const cells = this.cells;
    return {
      name: 'wikiedge_requests_total',
      help: 'Client requests by disposition (the X-Cache value), module, method, status class and status code.',
      type: 'counter' as const,
      aggregator: 'sum' as const,
      async get(): Promise<Exported> {
        const values = [...cells.values()].map((c) => ({ labels: { ...c.labels }, value: c.count }));
        return { name: this.name, help: this.help, type: 'counter', aggregator: 'sum', values };
      },
      reset() {
        for (const c of cells.values()) c.count = 0;
      },
    };
  }

  private histogramMetric() {
    const durations = this.durations;
    return {
      name: 'wikiedge_request_duration_seconds',
      help: 'Time from request to the last byte handed to the socket, by disposition.',
      type: 'histogram' as const,
      aggregator: 'sum' as const,
      async get(): Promise<Exported> {
        const values: ExportedValue[] = [];
        const bucket = `${this.name}_bucket`;
        for (const d of durations.values()) {
          let cumulative = 0;
          REQUEST_DURATION_BUCKETS.forEach((le, i) => {
            cumulative += d.counts[i]!;
            values.push({ metricName: bucket, labels: { le, disposition: d.disposition }, value: cumulative });
          });
          values.push(
            { metricName: bucket, labels: { le: '+Inf', disposition: d.disposition }, value: d.count },
            { metricName: `${this.name}_sum`, labels: { disposition: d.disposition }, value: d.sum },
            { metricName: `${this.name}_count`, labels: { disposition: d.disposition }, value: d.count },
          );
        }
        return { name: this.name, help: this.help, type: 'histogram', aggregator: 'sum', values };
      },
      reset() {
        for (const d of durations.values()) {
          d.counts.fill(0);
          d.sum = 0;
          d.count = 0;
        }
      },
    };
  }
}

export function statusClassOf(status: number): string {
  return status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : 'other';
}

/**
 * The status codes the gateway sends: its own (400, 403, 405, 414, 429, 499 for a client that
 * left, 500, 502, 503, 504; Node's 408 and 431 never reach a handler) and those the wiki, PHP or
 * the web server in front of them send, which are relayed as they are (RFC 9110 §15's codes
 * and 429, 431, 451). Anything else is `other`, so that a wiki inventing codes cannot grow the
 * series count; status_class still says its class.
 */
const STATUS_CODES = new Set([
  200, 201, 202, 203, 204, 205, 206, 300, 301, 302, 303, 304, 307, 308, 400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416,
  417, 421, 422, 425, 426, 428, 429, 431, 451, 499, 500, 501, 502, 503, 504, 505, 507, 508,
]);

export function codeLabel(status: number): string {
  return STATUS_CODES.has(status) ? String(status) : 'other';
}
