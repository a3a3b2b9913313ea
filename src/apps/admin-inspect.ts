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
 * cache and asks its workers only for metrics and purges (cluster/primary.ts), so there these
 * routes answer 501 and say so.
 */
import type { FastifyInstance } from 'fastify';
import { countByModule, describeVariants, localVariants, sharedVariants, type VariantView } from '../cache/inspect.js';
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

/** What the inspection routes read; a single process has one (localInspection), a cluster primary none. */
export interface Inspection {
  readonly apiPath: string;
  cache(urlKey: string): Promise<CacheView>;
  stats(): unknown;
  config(): Record<string, unknown>;
  trace(input: TraceInput): Promise<TraceView>;
  /** The wiki's namespaces as learned (title purges). */
  namespaces(): Namespaces;
  /** WIKIEDGE_MODULES' names (module purges). */
  operatorModules(): readonly string[];
}

/** The most variants of one URL read from the shared tier for GET /cache (one GET each). */
const MAX_SHARED_VARIANTS = 200;

/** How long POST /trace waits for its request's record to finish after the answer came. */
const TRACE_END_WAIT_MS = 10_000;

/** The single process's inspection: its gateway, and its public app to run traced requests through. */
export function localInspection(gw: Gateway, publicApp: FastifyInstance): Inspection {
  return {
    apiPath: gw.config.apiPath,
    async cache(urlKey) {
      const local = localVariants(gw.store.variants(urlKey));
      const shared = gw.storage.shared && gw.storage.sharedVariants ? await gw.storage.sharedVariants(urlKey, MAX_SHARED_VARIANTS) : undefined;
      const variants = describeVariants(
        [...local, ...sharedVariants(shared ?? [])],
        gw.now(),
        (e) => gw.store.freshness(e),
        (slot) => gw.sessionUsers.userOf(slot),
      );
      return {
        url: urlKey,
        variants,
        ...(gw.storage.shared && shared === undefined && { sharedTier: 'not listed: the shared tier could not be asked' }),
        ...(variants.length === 0 && { note: 'nothing cached for this URL' }),
      };
    },
    stats() {
      const parts = (['shared', 'session'] as const).map((part) => ({ part, modules: gw.store.modulesOfEntries(part) }));
      const tier = (part: 'shared' | 'session') => {
        const s = gw.store.stats(part);
        return { entries: s.entries, bytes: s.bytes, budgetBytes: s.budget, bodyBytes: s.bodyBytes };
      };
      return {
        local: { shared: tier('shared'), session: tier('session') },
        byModule: countByModule(parts, gw.moduleLabel),
        ...(gw.storage.shared && { sharedTier: 'not counted here: wikiedge_redis_* metrics' }),
      };
    },
    config() {
      const shown = describeConfig(gw.config);
      return Object.fromEntries(FIELD_LIST.map(([key, field]) => [field.env, shown[key]]));
    },
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

/** The 501 of these routes on a cluster primary, saying why. */
export const NOT_IN_A_CLUSTER =
  'not available with WIKIEDGE_WORKERS > 1: each worker holds its own local tier, and the primary asks them only for metrics and purges';
