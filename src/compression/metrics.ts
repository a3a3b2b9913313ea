/**
 * What compression costs and gains, on the registry handed in (never the global one):
 *
 *   wikiedge_served_body_bytes_total{coding}        api.php answer bodies sent, by content coding
 *                                                   (identity, gzip, br); HEAD sends none
 *   wikiedge_compression_input_bytes_total{coding,stage}
 *   wikiedge_compression_output_bytes_total{coding,stage}
 *                                                   bytes compressed and bytes made, by coding and
 *                                                   stage (store: once per stored entry, at its
 *                                                   miss or its first hit that takes gzip; answer:
 *                                                   an answer not stored, for its one client;
 *                                                   upgrade: br for a hot entry, in the
 *                                                   background); input ÷ output is the ratio
 *   wikiedge_compression_seconds_total{coding,stage} time spent compressing (CPU: node:zlib runs
 *                                                   one call on one thread)
 *   wikiedge_decompression_seconds_total            time spent decoding stored gzip for clients
 *                                                   that take no compression
 *   wikiedge_cache_identity_bytes{tier}             the stored entries' answers decoded: divided
 *                                                   by wikiedge_cache_stored_body_bytes, the
 *                                                   stored compression ratio
 *   wikiedge_cache_stored_body_bytes{tier}          the stored entries' bodies, every form
 *   wikiedge_brotli_upgrades_total{outcome}         hot entries given br: made, not-smaller,
 *                                                   gone (replaced or evicted meanwhile),
 *                                                   dropped (queue full), client-budget (the
 *                                                   asking client's store budget spent), failed
 *   wikiedge_decoded_cache_bytes                    decoded answers kept for identity clients
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Tier } from '../words/outcomes.js';
import { tierGauge } from '../observe/metrics.js';
import type { Coding, CompressionCost } from '../http/codings.js';

const CODINGS: readonly Coding[] = ['identity', 'gzip', 'br'];

export type CompressionStage = 'store' | 'answer' | 'upgrade';
const STAGES: readonly CompressionStage[] = ['store', 'answer', 'upgrade'];
export type UpgradeOutcome = 'made' | 'not-smaller' | 'gone' | 'dropped' | 'client-budget' | 'failed';

export interface CompressionMetricsOptions {
  /** The stores' figures, read at scrape time. */
  readonly tierStats?: (tier: Tier) => { readonly identityBytes: number; readonly bodyBytes: number };
  /** Bytes of decoded answers kept, read at scrape time. */
  readonly decodedBytes?: () => number;
}

export class CompressionMetrics {
  /**
   * Bytes served since the last scrape, added to the counter when it is collected: the
   * fresh-hit path adds to a number per hit rather than hashing labels.
   */
  private readonly pending: Record<Coding, number> = { identity: 0, gzip: 0, br: 0 };
  private readonly inputBytes: Counter<'coding' | 'stage'>;
  private readonly outputBytes: Counter<'coding' | 'stage'>;
  private readonly seconds: Counter<'coding' | 'stage'>;
  private readonly decodeSeconds: Counter;
  private readonly upgrades: Counter<'outcome'>;

  constructor(registry: Registry, opts: CompressionMetricsOptions = {}) {
    const registers = [registry];
    const pending = this.pending;
    new Counter({
      name: 'wikiedge_served_body_bytes_total',
      help: 'Bytes of api.php answer bodies sent to clients, by content coding (identity, gzip, br).',
      labelNames: ['coding'] as const,
      registers,
      collect() {
        for (const coding of CODINGS) {
          this.inc({ coding }, pending[coding]);
          pending[coding] = 0;
        }
      },
    });
    this.inputBytes = new Counter({
      name: 'wikiedge_compression_input_bytes_total',
      help: 'Bytes compressed, by coding and stage (store, answer, upgrade).',
      labelNames: ['coding', 'stage'] as const,
      registers,
    });
    this.outputBytes = new Counter({
      name: 'wikiedge_compression_output_bytes_total',
      help: 'Bytes made by compressing, by coding and stage (store, answer, upgrade).',
      labelNames: ['coding', 'stage'] as const,
      registers,
    });
    this.seconds = new Counter({
      name: 'wikiedge_compression_seconds_total',
      help: 'Seconds spent compressing, by coding and stage (store, answer, upgrade).',
      labelNames: ['coding', 'stage'] as const,
      registers,
    });
    // Every series a dashboard reads exists from the start, at 0: which stages compress depends on
    // the clients (a miss whose client takes no gzip compresses nothing: representations.ts
    // gzipFirst), and a panel should show none rather than no data.
    for (const coding of ['gzip', 'br'] as const)
      for (const stage of STAGES) for (const counter of [this.inputBytes, this.outputBytes, this.seconds]) counter.inc({ coding, stage }, 0);
    this.decodeSeconds = new Counter({
      name: 'wikiedge_decompression_seconds_total',
      help: 'Seconds spent decoding stored gzip for clients that take no compression.',
      registers,
    });
    this.upgrades = new Counter({
      name: 'wikiedge_brotli_upgrades_total',
      help: 'Hot entries given a br form in the background, by outcome (made, not-smaller, gone, dropped, client-budget, failed).',
      labelNames: ['outcome'] as const,
      registers,
    });
    const gauge = (name: string, help: string, pick: (s: { identityBytes: number; bodyBytes: number }) => number) =>
      tierGauge(registers, opts.tierStats, name, help, pick);
    gauge(
      'wikiedge_cache_identity_bytes',
      'The stored answers decoded, by tier: over wikiedge_cache_stored_body_bytes, the stored compression ratio.',
      (s) => s.identityBytes,
    );
    gauge('wikiedge_cache_stored_body_bytes', 'Stored answer bodies, every stored form (gzip, br, identity), by tier.', (s) => s.bodyBytes);
    const decodedBytes = opts.decodedBytes;
    new Gauge({
      name: 'wikiedge_decoded_cache_bytes',
      help: 'Decoded answers kept for clients that take no compression.',
      registers,
      collect() {
        if (decodedBytes) this.set(decodedBytes());
      },
    });
  }

  served(coding: Coding, bytes: number): void {
    this.pending[coding] += bytes;
  }

  compressed(cost: CompressionCost, stage: CompressionStage): void {
    const labels = { coding: cost.coding, stage };
    this.inputBytes.inc(labels, cost.inBytes);
    this.outputBytes.inc(labels, cost.outBytes);
    this.seconds.inc(labels, cost.seconds);
  }

  decoded(seconds: number): void {
    this.decodeSeconds.inc(seconds);
  }

  upgrade(outcome: UpgradeOutcome): void {
    this.upgrades.inc({ outcome });
  }
}
