/**
 * Admission to the wiki: at most `maxConcurrent` requests on their way to it at once (PHP has a
 * fixed number of workers: more only queue inside it, or in undici's pool, unbounded), at most
 * `maxQueued` waiting for a turn, none waiting longer than `queueTimeoutMs`, and no client
 * holding more than `perClientMax` of the turns and places (a handful of slow clients must not
 * pin every connection). What cannot wait is refused at once (503, or 429 for a client over its
 * share) with a Retry-After, as Wikimedia's PoolCounter does; a waiter whose client has gone
 * leaves the queue at once and is never sent to the wiki.
 *
 * Turns are released by the caller (`release()`), once the wiki's answer has been read, or
 * streamed out.
 */
import { ClientClosedError, GatewayError } from '../words/errors.js';

export interface GateOptions {
  readonly maxConcurrent: number;
  readonly maxQueued: number;
  readonly queueTimeoutMs: number;
  /** Turns plus places one client may hold; 0: no per-client limit. */
  readonly perClientMax: number;
  /** Turns plus places the clients of one group (the sessions of an address, limits/client-key.ts) may hold together; 0: no limit. */
  readonly perGroupMax?: number;
}

export type Release = () => void;

/**
 * How a waiter hears that its client left: an AbortSignal, or anything that says `aborted` and
 * calls an `abort` listener as one does. A miss passes its request record's (steps/request-record.ts
 * clientLeaving), heard from the close listener every request has anyway: an AbortController and
 * a second close listener per miss cost ~2.5 µs (docs/BENCHMARKS.md, "Where a miss's time goes"),
 * and only a miss that has to wait for its turn ever listens.
 */
export interface LeaveSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

interface Waiter {
  readonly client: string;
  readonly group: string;
  readonly grant: (release: Release) => void;
}

/** Why the gate refused: the `reason` label of wikiedge_upstream_rejected_total. */
export type GateRefusal = 'queue-full' | 'queue-timeout' | 'client-share';

export class UpstreamGate {
  private inFlight = 0;
  private readonly queue: Waiter[] = [];
  private readonly perClient = new Map<string, number>();

  constructor(
    private readonly opts: GateOptions,
    private readonly onRefusal?: (reason: GateRefusal) => void,
  ) {}

  get active(): number {
    return this.inFlight;
  }

  get queued(): number {
    return this.queue.length;
  }

  /**
   * A turn for `client` (its address, or '' for the gateway's own requests, which have no share
   * limit). Resolves with its release; rejects with GatewayError (429/503) or, when `signal`
   * aborts while waiting, ClientClosedError. `group` ('' for none): the group whose share it
   * also counts in (perGroupMax).
   */
  acquire(client: string, signal?: LeaveSignal, group = ''): Promise<Release> {
    const turn = this.take(client, signal, group);
    return turn instanceof Promise ? turn : Promise.resolve(turn);
  }

  /**
   * As acquire, but a turn free now is given as it is, not through a promise: the miss path's
   * common case (steps/admission.ts admit), where every promise costs (docs/BENCHMARKS.md run X).
   */
  take(client: string, signal?: LeaveSignal, group = ''): Release | Promise<Release> {
    if (signal?.aborted) return Promise.reject(new ClientClosedError());
    const held = client ? (this.perClient.get(client) ?? 0) : 0;
    if (client && this.opts.perClientMax > 0 && held >= this.opts.perClientMax) {
      return this.refuseAtOnce('client-share');
    }
    const groupMax = this.opts.perGroupMax ?? 0;
    if (group && groupMax > 0 && (this.perClient.get(group) ?? 0) >= groupMax) return this.refuseAtOnce('client-share');
    if (this.inFlight < this.opts.maxConcurrent) return this.grant(client, group);
    if (this.queue.length >= this.opts.maxQueued) return this.refuseAtOnce('queue-full');
    return new Promise<Release>((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const i = this.queue.indexOf(waiter);
        if (i !== -1) this.queue.splice(i, 1);
        this.untrack(client);
        this.untrack(group);
      };
      const onAbort = () => {
        leave();
        reject(new ClientClosedError());
      };
      const timer = setTimeout(() => {
        leave();
        reject(this.refusal('queue-timeout'));
      }, this.opts.queueTimeoutMs);
      timer.unref();
      const waiter: Waiter = {
        client,
        group,
        grant: (release) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.track(client);
      this.track(group);
      this.queue.push(waiter);
    });
  }

  private grant(client: string, group: string): Release {
    this.inFlight++;
    this.track(client);
    this.track(group);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight--;
      this.untrack(client);
      this.untrack(group);
      this.next();
    };
  }

  /** Hand the freed turn to the first waiter (its place in the share turns into the turn). */
  private next(): void {
    const waiter = this.queue.shift();
    if (!waiter) return;
    this.untrack(waiter.client);
    this.untrack(waiter.group);
    waiter.grant(this.grant(waiter.client, waiter.group));
  }

  private track(client: string): void {
    if (client) this.perClient.set(client, (this.perClient.get(client) ?? 0) + 1);
  }

  private untrack(client: string): void {
    if (!client) return;
    const n = (this.perClient.get(client) ?? 1) - 1;
    if (n <= 0) this.perClient.delete(client);
    else this.perClient.set(client, n);
  }

  /** Refused without waiting in the queue: the answer waits the refusal delay instead (words/errors.ts answerAfterDelay). */
  private refuseAtOnce(reason: GateRefusal): Promise<never> {
    return Promise.reject(this.refusal(reason, true));
  }

  private refusal(reason: GateRefusal, answerAfterDelay = false): GatewayError {
    this.onRefusal?.(reason);
    // A client over its share can retry as soon as one of its own requests is answered; a busy
    // wiki is given a few seconds.
    if (reason === 'client-share')
      return new GatewayError('wikiedge-rate-limited', {
        info: 'Too many requests of this client are already waiting for the wiki.',
        retryAfterSeconds: 1,
        answerAfterDelay,
      });
    return new GatewayError('wikiedge-overloaded', { retryAfterSeconds: Math.max(1, Math.ceil(this.opts.queueTimeoutMs / 1000)), answerAfterDelay });
  }
}
