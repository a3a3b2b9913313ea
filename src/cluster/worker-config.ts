/**
 * A worker runs the configuration its primary validated, never what the environment and files
 * happen to say when it starts: the primary reads the configuration's sources (environment,
 * WIKIEDGE_CONFIG file, `<ENV>_FILE` secrets; config/load.ts), validates them, and hands the
 * very same sources to every worker that asks, which validates them again to the same result.
 * So a file edited (or broken) since the last reload changes nothing until the next SIGHUP, not
 * even for a worker restarted after a crash in between; and a reload's new workers run exactly
 * what the reload validated (reload.ts).
 *
 * The sources travel over IPC, not in the environment: secrets read from files stay out of the
 * workers' environment.
 */
import { randomBytes } from 'node:crypto';
import type { ConfigSources, LoadedConfig } from '../config/config.js';
import { type ConfigMessage, isConfig } from './messages.js';

/** The primary's side: the sources every worker that starts from now on is given. */
export class WorkerConfig {
  /** One session-slot key for every worker of this primary, for its whole life (withSharedSecret). */
  private readonly drawnSecret = randomBytes(32).toString('base64url');
  private current: ConfigSources;

  constructor(loaded: LoadedConfig, sources: ConfigSources) {
    this.current = this.forWorkers(loaded, sources);
  }

  /** From now on, workers get these (validated: `loaded` is what they gave). */
  set(loaded: LoadedConfig, sources: ConfigSources): void {
    this.current = this.forWorkers(loaded, sources);
  }

  get sources(): ConfigSources {
    return this.current;
  }

  /** Answer a worker's config-ask. */
  answer(worker: { send(message: ConfigMessage): boolean }): void {
    worker.send({ wikiedge: 'config', sources: this.current });
  }

  /**
   * Workers must share the key of the session slots' HMAC (a session's entries, in Redis and in
   * purge messages, are keyed by it). Without a configured WIKIEDGE_IDENTITY_SECRET each process
   * would draw its own at start, so the primary draws one and hands it to every worker, the
   * same across reloads: a reload must not orphan every session's entries in Redis.
   */
  private forWorkers(loaded: LoadedConfig, sources: ConfigSources): ConfigSources {
    if (loaded.origins.identitySecret !== 'default') return sources;
    return { ...sources, env: { ...sources.env, WIKIEDGE_IDENTITY_SECRET: this.drawnSecret } };
  }
}

/** The worker's side: ask the primary for the sources to run; rejects after timeoutMs. */
export function configFromPrimary(timeoutMs: number): Promise<ConfigSources> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: unknown) => {
      if (!isConfig(m)) return;
      done();
      resolve(m.sources);
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`no configuration from the primary within ${timeoutMs} ms`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      process.off('message', onMessage);
    };
    process.on('message', onMessage);
    process.send?.({ wikiedge: 'config-ask' });
  });
}
