/**
 * One request's decisions, step by step, like `varnishlog` for one transaction: recv, key,
 * lookup, fetch, verdict, deliver, each with the milliseconds since the request began. Written
 * from the request's record (request-record.ts) as the steps note what they decided, so the
 * request path itself does nothing more for a traced request than for any other.
 *
 * Only the admin listener starts a trace (POST /trace, apps/admin-inspect.ts): it opens one here,
 * which gives it a random name of 192 bits, and runs its request through the public app with that
 * name in the X-Wikiedge-Trace header. The record takes the header off every request that
 * carries it (so the wiki never sees it) and follows only a name that is open, once: a client of
 * the public listener cannot start a trace, and no answer of the public listener ever carries
 * one (test/in-process/attack-trace-from-an-untrusted-client.test.ts).
 *
 * What a trace says of who asked is the identity's kind, never a cookie, a session slot or a
 * credential.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { CacheEntry } from '../cache/entry.js';
import type { Gateway } from '../gateway/gateway.js';
import { forwardedView, headerString } from '../http/forwarding.js';
import { identityFromHeaders } from '../mediawiki/identity.js';
import { clientAddress } from '../limits/client-key.js';
import { parsePhpQuery } from '../mediawiki/php-input.js';
import { cacheKey, canonicalQuery, KEYED_FIELDS } from '../policy/request.js';
import { ageSeconds } from '../policy/freshness.js';
import { codingsOf, identityKind, shownDependencies } from '../cache/inspect.js';
import type { Disposition, NoStoreReason, PassReason, Tier } from '../words/outcomes.js';
import type { RequestTarget } from '../words/target.js';
import { keyedHeadersOf } from './recv.js';

/** The request header that names an open trace (taken off every request, apps/public-app.ts never forwards it). */
export const TRACE_HEADER = 'x-wikiedge-trace';

export type TraceStep = 'recv' | 'key' | 'lookup' | 'fetch' | 'verdict' | 'deliver';

export interface TraceEvent {
  readonly step: TraceStep;
  /** Milliseconds since the request began. */
  readonly atMs: number;
  readonly [fact: string]: unknown;
}

/** A trace being written: its events, and the promise its request's end settles. */
export class Trace {
  readonly events: TraceEvent[] = [];
  /** Set when the record takes the trace: the clock and the parts the events describe. */
  gw: Gateway | undefined;
  startedAt = 0;
  /** The cache key, when the request was looked up (never shown: it holds the session slot). */
  key: string | undefined;
  tier: Tier | undefined;
  urlKey: string | undefined;
  private settle: () => void = () => undefined;
  /** Facts still to come once the answer went out (the entry a miss stores after it). */
  private readonly pending: Promise<unknown>[] = [];
  /** Settles once the request's record is finished (its answer sent, or the client gone) and its late facts are in. */
  readonly finished = new Promise<void>((resolve) => (this.settle = resolve));

  add(step: TraceStep, facts: Record<string, unknown>): TraceEvent {
    const now = this.gw ? this.gw.now() : this.startedAt;
    const event = { step, atMs: Math.round((now - this.startedAt) * 10) / 10, ...facts };
    this.events.push(event);
    return event;
  }

  /** A fact that comes after the answer: finished waits for it. */
  later(work: Promise<unknown>): void {
    this.pending.push(work);
  }

  finish(): void {
    void Promise.all(this.pending).then(() => this.settle());
  }
}

/** How long a trace waits for the store of its miss, which runs after the answer. */
const TRACE_STORE_WAIT_MS = 5_000;

/** Open traces by name: one-shot, removed when taken or closed. */
const open = new Map<string, Trace>();

/** A new trace and the name its request must carry in TRACE_HEADER. */
export function openTrace(): { readonly name: string; readonly trace: Trace } {
  const name = randomBytes(24).toString('base64url');
  const trace = new Trace();
  open.set(name, trace);
  return { name, trace };
}

/** Forget a trace whose request never came (the admin gave up waiting). */
export function closeTrace(name: string): void {
  open.delete(name);
}

/**
 * The open trace a request names, taken (it cannot be named twice), or undefined; the header is
 * removed from the request either way, so that nothing forwards it.
 */
export function claimTrace(gw: Gateway, request: FastifyRequest, startedAt: number): Trace | undefined {
  const headers = request.headers;
  const given = headers[TRACE_HEADER];
  if (given === undefined) return undefined;
  delete headers[TRACE_HEADER];
  const name = headerString(given);
  const trace = name === undefined ? undefined : open.get(name);
  if (!trace) return undefined;
  open.delete(name!);
  trace.gw = gw;
  trace.startedAt = startedAt;
  trace.add('recv', { method: request.method, path: request.raw.url?.split('?', 1)[0] });
  return trace;
}

/**
 * recv, key and lookup of an api.php request, noted when the recv step has named its modules
 * (steps/flow.ts, before its lookup): the identity's kind, the key's parts but the slot, and
 * what this process's local tier holds under the key now. The key is made as flow.ts `hash` makes
 * it, from the same inputs.
 */
export function traceApiRequest(trace: Trace, request: FastifyRequest, target: RequestTarget, module: string, peerTrusted: boolean): void {
  const gw = trace.gw!;
  const query = parsePhpQuery(target.rawQuery);
  const view = forwardedView(request.headers);
  const identity = identityFromHeaders(view, query, gw.identityRules, () =>
    clientAddress(request.socket.remoteAddress, headerString(request.headers['x-forwarded-for']), gw.trusted),
  );
  const kind = identityKind(identity.kind, identity.kind === 'session' ? gw.sessionUsers.userOf(identity.slot) : undefined);
  trace.add('recv', { module, identity: kind });
  const urlKey = `${gw.config.apiPath}?${canonicalQuery(query)}`;
  const keyed = keyedHeadersOf(view, request.socket.remoteAddress, peerTrusted, query);
  const tier: Tier = identity.kind === 'session' ? 'session' : 'shared';
  trace.tier = tier;
  trace.add('key', {
    url: urlKey,
    tier,
    identity: kind,
    keyedHeaders: Object.fromEntries(KEYED_FIELDS.map((f) => [f, keyed[f] ?? null])),
  });
  if (identity.kind === 'unsure') return;
  trace.key = cacheKey(urlKey, identity, keyed);
  trace.urlKey = urlKey;
  const held = gw.store.variants(urlKey).find((v) => v.key === trace.key);
  trace.add(
    'lookup',
    held
      ? { local: gw.store.freshness(held.entry), ageSeconds: ageSeconds(held.entry, gw.now()), ttlSeconds: held.entry.ttlMs / 1000 }
      : { local: 'none', ...(gw.storage.shared && { then: 'the shared tier is asked' }) },
  );
}

/** What the steps decided: the fetch (when the wiki was asked) and the verdict on storing. */
export function traceOutcome(
  trace: Trace,
  outcome: {
    readonly disposition: Disposition;
    readonly passReason?: PassReason | undefined;
    readonly notStored?: NoStoreReason | undefined;
    readonly upstreamMs?: number | undefined;
  },
): void {
  if (outcome.upstreamMs !== undefined) trace.add('fetch', { upstreamMs: Math.round(outcome.upstreamMs * 10) / 10 });
  if (outcome.passReason !== undefined) trace.add('verdict', { stored: false, pass: outcome.passReason });
  else if (outcome.notStored !== undefined) trace.add('verdict', { stored: false, notStored: outcome.notStored });
  else if (outcome.disposition === 'miss' || outcome.disposition === 'bypass') {
    const gw = trace.gw!;
    const keptNow = () => (trace.key === undefined ? undefined : gw.store.variants(trace.urlKey!).find((v) => v.key === trace.key)?.entry);
    const event: Record<string, unknown> = trace.add('verdict', { stored: true });
    const describe = (kept: CacheEntry | undefined) =>
      kept && Object.assign(event, { ttlSeconds: kept.ttlMs / 1000, dependencies: shownDependencies(kept.deps), codings: codingsOf(kept) });
    // A miss is stored after its answer went out (flow.ts fetchAndStore): its entry is described
    // once the store has run, in the event's place among the others.
    if (!describe(keptNow())) trace.later(gw.afterAnswers.settled(TRACE_STORE_WAIT_MS).then(() => describe(keptNow())));
  } else trace.add('verdict', { stored: false, servedFrom: outcome.disposition });
}

/** The answer as it left: its status and X-Cache disposition, and the request's whole time. */
export function traceDelivery(trace: Trace, status: number, disposition: Disposition, errorCode: string | undefined): void {
  trace.add('deliver', { status, disposition, ...(errorCode !== undefined && { error: errorCode }) });
  trace.finish();
}
