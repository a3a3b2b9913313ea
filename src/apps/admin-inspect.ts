/**
 * Seeing into the gateway from the admin listener (apps/admin.ts registers these routes behind
 * its token):
 *
 *   GET  /cache?url=<api.php URL>   every variant the local tier holds for the URL (cache/inspect.ts)
 *   GET  /cache/stats               entries and bytes per tier part, entries per module label
 *   GET  /config                    the running configuration, secrets redacted (config/render.ts)
 *   POST /trace?url=<URL>           one request run through the public app, and its trace
 *                                   (steps/trace.ts), like `varnishlog` for one transaction
 *
 * A single process answers from its own gateway (localInspection). A cluster primary holds no
 * cache: it asks its workers over IPC (cluster/inspect-workers.ts), and each worker answers from
 * the same functions as a single process (heldVariants, localStats, localInspection's trace).
 */
import type { FastifyInstance } from 'fastify';
import { countByModule, describeVariants, type HeldVariant, localVariants, sharedVariants, type VariantView } from '../cache/inspect.js';
import type { Config } from '../config/config.js';
import { FIELD_LIST } from '../config/fields.js';
import { describeConfig } from '../config/render.js';
import type { Gateway } from '../gateway/gateway.js';
import type { Namespaces } from '../mediawiki/titles.js';
import { parsePhpQuery } from '../mediawiki/php-input.js';
import { canonicalQuery } from '../policy/request.js';
import { closeTrace, openTrace, TRACE_HEADER, type TraceEvent } from '../steps/trace.js';
import { isApiTarget, parseTarget } from '../words/target.js';

/** GET /cache: what is held for one URL. */
export interface CacheView {
  /** The URL key the variants are filed under (the query canonically ordered). */
  readonly url: string;
  readonly variants: readonly VariantView[];
  /** Said when a shared tier is configured but could not be asked: its copies are not listed. */
  readonly sharedTier?: string;
  /** Said when nothing is held. */
  readonly note?: string;
}

export interface TraceInput {
  readonly method: 'GET' | 'HEAD';
  /** The request target, origin-form (`/w/api.php?…`). */
  readonly url: string;
  /** Request headers to send with it (a Cookie to trace a session's request): never echoed. */
  readonly headers: Readonly<Record<string, string>>;
}

export interface TraceView {
  readonly request: { readonly method: string; readonly url: string };
  readonly status: number;
  readonly xCache: string | undefined;
  readonly bytes: number;
  readonly events: readonly TraceEvent[];
}

/** What the inspection routes read: a single process's gateway (localInspection), or a cluster's workers (cluster/inspect-workers.ts). */
export interface Inspection {
  readonly apiPath: string;
  cache(urlKey: string): Promise<CacheView>;
  /** LocalStats, or (a cluster) their sum and each worker's. */
  stats(): unknown;
  config(): Record<string, unknown>;
  trace(input: TraceInput): Promise<TraceView>;
  /** The wiki's namespaces as learned (title purges); a cluster asks a worker. */
  namespaces(): Namespaces | Promise<Namespaces>;
  /** WIKIEDGE_MODULES' names (module purges). */
  operatorModules(): readonly string[];
}

/** The most variants of one URL read from the shared tier for GET /cache (one GET each). */
const MAX_SHARED_VARIANTS = 200;

/** How long POST /trace waits for its request's record to finish after the answer came. */
export const TRACE_END_WAIT_MS = 10_000;

/**
 * A variant as described, with the session slot it belongs to (undefined: anonymous). The slot
 * stays inside the process tree (a cluster's IPC): numberSessions turns it into a number valid
 * for one answer before anything is shown.
 */
export interface SlottedVariant {
  readonly view: VariantView;
  readonly slot: string | undefined;
}

/** What one gateway holds for a URL: its local tier's variants, and the shared tier's when asked for. */
export interface HeldVariants {
  readonly local: readonly SlottedVariant[];
  /** 'none': no shared tier, or not asked; 'unlisted': configured but it could not be asked. */
  readonly shared: readonly SlottedVariant[] | 'none' | 'unlisted';
}

/** One gateway's variants of a URL, described; the shared tier's too when withShared (one GET each, at most MAX_SHARED_VARIANTS). */
export async function heldVariants(gw: Gateway, urlKey: string, withShared: boolean): Promise<HeldVariants> {
  const asked = withShared && gw.storage.shared;
  const shared = asked && gw.storage.sharedVariants ? await gw.storage.sharedVariants(urlKey, MAX_SHARED_VARIANTS) : undefined;
  const describe = (held: readonly HeldVariant[]): SlottedVariant[] => {
    const views = describeVariants(
      held,
      gw.now(),
      (e) => gw.store.freshness(e),
      (slot) => gw.sessionUsers.userOf(slot),
    );
    return views.map((view, i) => ({ view, slot: held[i]!.slot }));
  };
  return {
    local: describe(localVariants(gw.store.variants(urlKey))),
    shared: !asked ? 'none' : shared === undefined ? 'unlisted' : describe(sharedVariants(shared)),
  };
}

/**
 * The variants as shown: sessions numbered 1, 2, … in the order met, the same number for the same
 * session within the answer (its copies in every worker and the shared tier alike); no slot.
 */
export function numberSessions<V extends object>(variants: readonly (SlottedVariant & { readonly extra?: V })[]): (VariantView & Partial<V>)[] {
  const sessions = new Map<string, number>();
  return variants.map(({ view, slot, extra }) => {
    const { session: _given, ...rest } = view;
    let session: number | undefined;
    if (slot !== undefined) {
      session = sessions.get(slot) ?? sessions.size + 1;
      sessions.set(slot, session);
    }
    return { ...rest, ...(session !== undefined && { session }), ...extra } as VariantView & Partial<V>;
  });
}

/** GET /cache's answer from the variants shown. */
export function cacheView(urlKey: string, variants: readonly VariantView[], sharedUnlisted: boolean): CacheView {
  return {
    url: urlKey,
    variants,
    ...(sharedUnlisted && { sharedTier: 'not listed: the shared tier could not be asked' }),
    ...(variants.length === 0 && { note: 'nothing cached for this URL' }),
  };
}

/** One part of the local tier, as GET /cache/stats shows it. */
export interface PartStats {
  readonly entries: number;
  readonly bytes: number;
  readonly budgetBytes: number;
  readonly bodyBytes: number;
}

/** GET /cache/stats of one gateway. */
export interface LocalStats {
  readonly local: Readonly<Record<'shared' | 'session', PartStats>>;
  readonly byModule: Readonly<Record<string, Readonly<Record<'shared' | 'session', number>>>>;
  readonly sharedTier?: string;
}

export function localStats(gw: Gateway): LocalStats {
  const parts = (['shared', 'session'] as const).map((part) => ({ part, modules: gw.store.modulesOfEntries(part) }));
  const tier = (part: 'shared' | 'session'): PartStats => {
    const s = gw.store.stats(part);
    return { entries: s.entries, bytes: s.bytes, budgetBytes: s.budget, bodyBytes: s.bodyBytes };
  };
  return {
    local: { shared: tier('shared'), session: tier('session') },
    byModule: countByModule(parts, gw.moduleLabel),
    ...(gw.storage.shared && { sharedTier: SHARED_TIER_NOT_COUNTED }),
  };
}

export const SHARED_TIER_NOT_COUNTED = 'not counted here: wikiedge_redis_* metrics';

/** GET /config: the running configuration by environment key, secrets redacted (config/render.ts). */
export function runningConfig(config: Config): Record<string, unknown> {
  const shown = describeConfig(config);
  return Object.fromEntries(FIELD_LIST.map(([key, field]) => [field.env, shown[key]]));
}

/** The single process's inspection: its gateway, and its public app to run traced requests through. */
export function localInspection(gw: Gateway, publicApp: FastifyInstance): Inspection {
  return {
    apiPath: gw.config.apiPath,
    async cache(urlKey) {
      const held = await heldVariants(gw, urlKey, true);
      const variants = numberSessions([...held.local, ...(Array.isArray(held.shared) ? held.shared : [])]);
      return cacheView(urlKey, variants, held.shared === 'unlisted');
    },
    stats: () => localStats(gw),
    config: () => runningConfig(gw.config),
    async trace(input) {
      const { name, trace } = openTrace();
      try {
        const res = await publicApp.inject({ method: input.method, url: input.url, headers: { ...input.headers, [TRACE_HEADER]: name } });
        await Promise.race([trace.finished, new Promise((resolve) => setTimeout(resolve, TRACE_END_WAIT_MS).unref())]);
        const xCache = res.headers['x-cache'];
        return {
          request: { method: input.method, url: input.url },
          status: res.statusCode,
          xCache: typeof xCache === 'string' ? xCache : undefined,
          bytes: res.rawPayload.length,
          events: trace.events,
        };
      } finally {
        closeTrace(name);
      }
    },
    namespaces: () => gw.changes.namespaces,
    operatorModules: () => Object.keys(gw.config.modules),
  };
}

/** A URL given to GET /cache, as its URL key, or why it is not one. */
export function urlKeyOf(url: unknown, apiPath: string): string | { readonly error: string } {
  if (typeof url !== 'string' || url === '') return { error: `give url=<an api.php URL> (${apiPath}?…)` };
  const target = parseTarget(url);
  if (!isApiTarget(target, apiPath)) return { error: `url= must be an api.php URL (${apiPath}?…)` };
  return `${apiPath}?${canonicalQuery(parsePhpQuery(target.rawQuery))}`;
}

/** What POST /trace asks to run, or why it cannot. */
export function traceInputOf(given: Record<string, unknown>): TraceInput | { readonly error: string } {
  const url = given['url'];
  if (typeof url !== 'string' || !url.startsWith('/') || url.startsWith('//'))
    return { error: 'give url=<a request target of the public listener> (/w/api.php?…)' };
  const method = given['method'] === undefined ? 'GET' : given['method'];
  if (method !== 'GET' && method !== 'HEAD') return { error: 'method= must be GET or HEAD (a trace never writes to the wiki)' };
  const headers = given['headers'] ?? {};
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers) || !Object.values(headers).every((v) => typeof v === 'string'))
    return { error: 'headers= must be an object of strings ({"cookie": "…"})' };
  return { method, url, headers: headers as Record<string, string> };
}
