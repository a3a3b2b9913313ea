/**
 * WIKIEDGE_MODULES names modules by hand, and a name the wiki does not have (a typo, an
 * extension that is not installed, the metrics' `query+siteinfo` label instead of `siteinfo`)
 * would make its rule silently never apply. The wiki knows its modules: its paraminfo lists every
 * action (`main`'s `action` parameter) and every query submodule (`query`'s `prop`, `list`,
 * `meta` and `generator`). So once the wiki answers, the gateway asks it once, in the background,
 * and warns about the names it does not know. Start never waits for it, and a wiki that cannot
 * be asked only gets an info line: the rules apply by name either way.
 */
import type { Logger } from 'pino';
import type { UpstreamRequest, UpstreamResponse } from './upstream.js';

/** The names MediaWiki uses for WIKIEDGE_MODULES' keys (docs/CONFIGURATION.md, WIKIEDGE_MODULES: for action=query, the submodules). */
export const PARAMINFO_QUERY = 'action=paraminfo&modules=main%7Cquery&format=json&formatversion=2';

interface ParamInfo {
  readonly paraminfo?: {
    readonly modules?: readonly {
      readonly path?: string;
      readonly parameters?: readonly { readonly name?: string; readonly type?: unknown }[];
    }[];
  };
}

const MODULE_PARAMETERS: Readonly<Record<string, readonly string[]>> = {
  main: ['action'],
  query: ['prop', 'list', 'meta', 'generator'],
};

/** Every module name in a paraminfo answer of `modules=main|query`; undefined if it lists none. */
export function knownModuleNames(answer: unknown): ReadonlySet<string> | undefined {
  const names = new Set<string>();
  for (const module of (answer as ParamInfo | null)?.paraminfo?.modules ?? []) {
    const wanted = MODULE_PARAMETERS[module.path ?? ''] ?? [];
    for (const p of module.parameters ?? []) {
      if (wanted.includes(p.name ?? '') && Array.isArray(p.type)) for (const t of p.type) if (typeof t === 'string') names.add(t);
    }
  }
  return names.size > 0 ? names : undefined;
}

/** The configured names the wiki does not know, each with a hint when one is obvious. */
export function unknownModuleNames(configured: readonly string[], known: ReadonlySet<string>): string[] {
  return configured
    .filter((name) => !known.has(name))
    .map((name) => {
      const bare = /^query[+ ](.+)$/.exec(name)?.[1];
      return bare !== undefined && known.has(bare) ? `${name} (did you mean ${bare}?)` : name;
    });
}

export interface ModuleCheckOptions {
  readonly upstream: { request(req: UpstreamRequest): Promise<UpstreamResponse> };
  readonly apiPath: string;
  /** The keys of WIKIEDGE_MODULES. */
  readonly names: readonly string[];
  readonly timeoutMs: number;
  readonly log: Logger;
}

/** Ask the wiki once and log what it does not know. Never throws. */
export async function checkModuleNames(options: ModuleCheckOptions): Promise<void> {
  const { upstream, apiPath, names, timeoutMs, log } = options;
  if (names.length === 0) return;
  let known: ReadonlySet<string> | undefined;
  try {
    const res = await upstream.request({
      method: 'GET',
      path: `${apiPath}?${PARAMINFO_QUERY}`,
      headers: { 'user-agent': 'wikiedge-module-check' },
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.body.text();
    known = res.statusCode === 200 ? knownModuleNames(JSON.parse(text)) : undefined;
  } catch (err) {
    log.info({ err: String(err) }, "WIKIEDGE_MODULES: could not ask the wiki's paraminfo for its module names; not checked");
    return;
  }
  if (!known) {
    log.info("WIKIEDGE_MODULES: the wiki's paraminfo listed no modules; not checked");
    return;
  }
  const unknown = unknownModuleNames(names, known);
  if (unknown.length === 0) return;
  log.warn(
    { unknownModules: unknown },
    `WIKIEDGE_MODULES names modules this wiki does not have (its paraminfo lists every action and query submodule), whose rules never apply: ${unknown.join(', ')}`,
  );
}

/**
 * For the upstream probe's onChange (upstream/probe.ts): check the names the first time the wiki
 * answers, so that a wiki that is down at start is asked once it is up, and asked only once.
 */
export function checkModuleNamesOnceUp(options: ModuleCheckOptions): (result: { readonly up: boolean }) => void {
  let asked = false;
  return (result) => {
    if (!result.up || asked) return;
    asked = true;
    void checkModuleNames(options);
  };
}
