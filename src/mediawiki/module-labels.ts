/**
 * The `module` label of the request metrics and the access log: MediaWiki's own module names,
 * from a closed set, so that a client inventing module names cannot grow the series count.
 * Pure: the request's modules (policy/request.ts modulesOf) in, one label out.
 */

/**
 * Module label values: every module of the module table (modules.ts: MediaWiki 1.39 core's API
 * actions and query submodules, Wikibase's) and whatever the operator's module rules name.
 * Anything else is `other`, so a client inventing module names cannot grow the series count.
 */
import { KNOWN_MODULE_NAMES } from './modules.js';

export function moduleLabeller(extra: readonly string[]): (modules: readonly string[]) => string {
  const known = new Set([...KNOWN_MODULE_NAMES, ...extra]);
  return (modules) => {
    const action = modules[0] ?? 'help';
    if (!known.has(action)) return 'other';
    if (action !== 'query' || modules.length === 1) return action;
    // One series per query submodule; several at once are folded, so combinations cannot explode.
    if (modules.length > 2) return 'query+multiple';
    const sub = modules[1]!;
    return known.has(sub) ? `query+${sub}` : 'query+other';
  };
}

/**
 * A POST whose form could not be read (a body too large to hold, streamed on as it came, or a
 * form PHP would not parse either): its module is not known, and the label says so rather than
 * guessing from the query string, which the body may override ($_POST wins over $_GET in
 * MediaWiki's WebRequest).
 */
export const UNKNOWN_MODULE = 'unknown';
