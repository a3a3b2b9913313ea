/**
 * SIGHUP: reload, as nginx and Varnish operators expect, without refusing or failing a request,
 * in either process model: a single process (WIKIEDGE_WORKERS=1, the default: single.ts builds a
 * new gateway behind the same listening socket, generations.ts) or a cluster primary (its
 * workers replaced one at a time, primary.ts).
 *
 * 1. Re-read the configuration's sources (config/load.ts): the file named by WIKIEDGE_CONFIG and
 *    the `<ENV>_FILE` secrets. The environment of a running process cannot change, so a key set
 *    in the environment keeps its value (and wins over the file) until a restart: keys meant to
 *    change at reload belong in the file. A file is what every process manager can change under
 *    a running process: a Kubernetes ConfigMap or Secret mounted as a volume is updated in place
 *    (not one mounted with subPath, nor one used as environment variables), a Docker bind mount
 *    or a systemd-managed file is edited; systemd's EnvironmentFile= and Docker's --env-file, in
 *    contrast, are read only when the process starts.
 * 2. Validate them as at start. Invalid, or changing a key that needs a restart (FIXED_ON_RELOAD:
 *    the bound listeners, the number of workers, the log's format): one error line naming the
 *    key, and nothing changes.
 * 3. Put it to work (ReloadSteps.replace). A cluster replaces its workers one at a time
 *    (supervisor.ts replaceAll): the new one listens before the old one drains, so capacity never
 *    drops, and workers started meanwhile, a crashed one's replacement included, run the new
 *    configuration (worker-config.ts). The primary adopts it once every worker runs it; a
 *    replacement stopped halfway (a new worker exited before it listened) puts the old one back
 *    for the workers started after it (primary.ts). A single process makes a new gateway current
 *    from the next request on and retires the old one once it has answered what it holds; the
 *    new configuration is current once that gateway is built.
 *
 * What a reload keeps: the Redis tier, and the local tier: a replaced worker hands its shared
 * entries to its replacement before it drains (tier-hand-over.ts; at most HAND_OVER_LIMIT_MS a
 * worker; per-session entries are lost, with Redis refilled from there as `hit-shared`), a single
 * process both tiers in memory. Counters never go down (metrics-aggregation.ts).
 *
 * One line at the start of a reload and one at its end; a SIGHUP during a reload runs one more
 * reload after it (the file may have changed again), one during start-up reloads once start-up is
 * over, a SIGHUP during shutdown is ignored.
 */
import type { Logger } from 'pino';
import { RedisRefusal } from '../cache/redis/server-check.js';
import { type Config, ConfigError, type ConfigKey, type ConfigSources, configFromSources, type LoadedConfig, usesRedis } from '../config/config.js';
import { FIELDS } from '../config/fields.js';
import { comparable, FIXED_ON_RELOAD, wikiChanged } from '../config/reload-keys.js';
import { takeEarlySignal } from './early-signals.js';
import type { ReplaceOutcome } from './supervisor.js';

export { FIXED_ON_RELOAD } from '../config/reload-keys.js';

export interface ReloadSteps {
  /** Read the configuration's sources as they are now (I/O; throws ConfigError). */
  read(): ConfigSources;
  /** The configuration running now. */
  current(): LoadedConfig;
  /**
   * A validated configuration, for what replace() starts (the new gateway, the new workers). The
   * configuration running now stays current() until replace() has put this one to work.
   */
  apply(loaded: LoadedConfig, sources: ConfigSources): void;
  /** What replace() does, for the log line before it: "replacing the workers one at a time". */
  readonly replacing: string;
  /** Put the applied configuration to work; says how it ended, as the line to log. */
  replace(changed: readonly string[]): Promise<ReloadEnd>;
  readonly shuttingDown: boolean;
}

/** The last line of a reload. */
export interface ReloadEnd {
  readonly level: 'info' | 'error';
  readonly fields: Record<string, unknown>;
  readonly msg: string;
}

/**
 * How a cluster's replacement of its workers ended (supervisor.ts replaceAll), as a line. A new
 * worker that said why it failed to start (messages.ts StartFailedMessage) gives `err`, and the
 * key to set as `key`, as a refused configuration's line does (reloadOnSighup).
 */
export function workersReplaced(
  outcome: ReplaceOutcome,
  changed: readonly string[],
  startFailure?: { readonly key?: string; readonly err: string },
): ReloadEnd {
  if (outcome.failed) {
    return {
      level: 'error',
      fields: {
        ...(startFailure?.key !== undefined && { key: startFailure.key }),
        ...(startFailure && { err: startFailure.err }),
        ...outcome.failed,
        replaced: outcome.replaced,
        changed,
      },
      msg: 'reload stopped: a new worker exited before it listened; the workers not yet replaced keep the old configuration, and a worker restarted from now on gets it too',
    };
  }
  if (outcome.stopped) return { level: 'info', fields: { replaced: outcome.replaced }, msg: 'reload stopped: shutting down' };
  return { level: 'info', fields: { replaced: outcome.replaced, changed }, msg: 'reload complete' };
}

/**
 * A single process's reload whose new gateway could not be built (single.ts: generations.ts
 * replace threw), as a line. A Redis that is not what the new settings say (a RedisRefusal,
 * cache/redis/server-check.ts) names the key to set as `key`, as a refused configuration does
 * (reloadOnSighup: `{ key, err }`), so that both can be found by the same field.
 * test/unit/reload-refused-by-redis-names-the-key.test.ts.
 */
export function gatewayNotBuilt(err: unknown, changed: readonly string[]): ReloadEnd {
  return {
    level: 'error',
    fields: { ...(err instanceof RedisRefusal ? { key: err.key } : {}), err: String(err), changed },
    msg: 'reload failed: the new gateway could not be built; the old configuration keeps serving',
  };
}

/**
 * Whether a reload from `before` to `after` may hand the local tier over to the new gateway: not
 * when it changes which wiki is cached, or how its requests are told apart
 * (config/reload-keys.ts WIKI_KEYS). Then it says so in one line, and, with Redis under the same
 * key prefix, that the Redis tier still holds the old answers (docs/OPERATIONS.md, Reload).
 */
export function mayHandOver(log: Logger, before: Config, after: Config): boolean {
  const changed = wikiChanged(before, after);
  if (changed.length === 0) return true;
  const sameRedis = usesRedis(after) && before.redisKeyPrefix === after.redisKeyPrefix;
  log.warn(
    { changed, redisKeyPrefix: sameRedis ? after.redisKeyPrefix : undefined },
    sameRedis
      ? 'reload: the cache is of another wiki, or its requests are told apart otherwise: nothing is handed over; the Redis tier still holds the old answers under the same WIKIEDGE_REDIS_KEY_PREFIX (set a new one, or POST /purge?all=1)'
      : 'reload: the cache is of another wiki, or its requests are told apart otherwise: nothing is handed over',
  );
  return false;
}

/**
 * The warning a reload that turns the change follower off where nothing ends what it vouched for
 * deserves, or undefined. A single process's reload takes a `follower-off` gap once the old
 * follower stops, and with Redis every new process takes it from the follower's cursor
 * (gateway/gateway.ts followerStopped, endFollowedTtlInRedis); a cluster without Redis hands its
 * workers' entries to new processes that cannot know they were stored under the followed TTL
 * (docs/INVALIDATION.md, "Turning the follower off"). Pure.
 */
export function followerOffUncovered(before: Config, after: Config): string | undefined {
  if (!before.rcFollow || after.rcFollow || after.workers <= 1 || usesRedis(after)) return undefined;
  return `reload: WIKIEDGE_RC_FOLLOW turned off: the entries handed over to the new workers keep the followed TTL (up to ${before.ttlFollowedSeconds} s) with nothing to invalidate them; purge everything (POST /purge?all=1) once the reload is complete`;
}

/** What a reload from `before` to `after` changes, or the first fixed key it would change. Pure. */
export function reloadPlan(before: LoadedConfig, after: LoadedConfig): { readonly changed: ConfigKey[] } | { readonly refused: ConfigKey } {
  const changed = (Object.keys(FIELDS) as ConfigKey[]).filter((key) => !sameValue(key, before, after));
  const refused = changed.find((key) => FIXED_ON_RELOAD.includes(key));
  return refused ? { refused } : { changed };
}

function sameValue(key: ConfigKey, before: LoadedConfig, after: LoadedConfig): boolean {
  // A default drawn at each load (the identity secret) is the primary's one drawn value for its workers.
  if (before.origins[key] === 'default' && after.origins[key] === 'default') return true;
  return comparable(before.config[key]) === comparable(after.config[key]);
}

/** The SIGHUP handler, installed before start-up (reloadOnSighup). */
export interface SighupReload {
  /**
   * Start-up is over: from now on a SIGHUP reloads at once, and one that came during start-up
   * reloads now (unless shutdown has begun).
   */
  started(): void;
}

/**
 * Install the SIGHUP handler (of the cluster primary, or of the single process). Installed first
 * thing, before any await of start-up: until a process listens for SIGHUP, Node's default action
 * ends it (https://nodejs.org/api/process.html#signal-events), and systemd's `systemctl reload`
 * (deploy/systemd/wikiedge.service) may send it as soon as the process is started. A SIGHUP during
 * start-up is remembered and reloads once start-up is over (`started`), so that a file changed
 * meanwhile still takes effect; test/in-process/sighup-during-start-up-reloads-once-up.test.ts.
 */
export function reloadOnSighup(log: Logger, steps: ReloadSteps): SighupReload {
  let up = false;
  let early = false;
  let running = false;
  let again = false;

  const reload = async (): Promise<void> => {
    log.info(
      { signal: 'SIGHUP' },
      'reload: re-reading the configuration (the WIKIEDGE_CONFIG file and <KEY>_FILE secrets; the environment stays as it was at start)',
    );
    let loaded: LoadedConfig;
    let sources: ConfigSources;
    try {
      sources = steps.read();
      loaded = configFromSources(sources);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      log.error({ key: err.key, err: err.message }, `reload refused, the old configuration keeps serving: ${err.message}`);
      return;
    }
    const plan = reloadPlan(steps.current(), loaded);
    if ('refused' in plan) {
      const env = FIELDS[plan.refused].env;
      log.error({ key: env }, `reload refused, the old configuration keeps serving: ${env} cannot change without a restart`);
      return;
    }
    for (const warning of loaded.warnings) log.warn(warning);
    const uncovered = followerOffUncovered(steps.current().config, loaded.config);
    if (uncovered !== undefined) log.warn({ key: FIELDS.rcFollow.env }, uncovered);
    const changed = plan.changed.map((key) => FIELDS[key].env);
    steps.apply(loaded, sources);
    log.info({ changed }, `reload: configuration valid; ${steps.replacing}`);
    const end = await steps.replace(changed);
    log[end.level](end.fields, end.msg);
  };

  const onSighup = (): void => {
    if (steps.shuttingDown) return void log.info({ signal: 'SIGHUP' }, 'SIGHUP ignored: shutting down');
    if (!up) {
      early = true;
      return void log.info({ signal: 'SIGHUP' }, 'SIGHUP during start-up: the reload follows once start-up is over');
    }
    if (running) {
      again = true;
      return void log.info({ signal: 'SIGHUP' }, 'SIGHUP during a reload: another reload follows this one');
    }
    running = true;
    void (async () => {
      try {
        do {
          again = false;
          await reload();
        } while (again && !steps.shuttingDown);
      } catch (err) {
        log.error({ err }, 'reload failed');
      } finally {
        running = false;
      }
    })();
  };
  process.on('SIGHUP', onSighup);
  // One that came before this handler, while the process loaded (early-signals.ts): remembered as any during start-up.
  if (takeEarlySignal('SIGHUP')) onSighup();
  return {
    started: () => {
      if (up) return;
      up = true;
      if (early) onSighup();
    },
  };
}
