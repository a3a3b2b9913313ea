/**
 * The admin listener's options read from the configuration in force at each request, not the one
 * at start: a reload (reload.ts) changes the tokens, from their `_FILE` secrets too, and the API
 * path, for the next admin request. Used by the cluster primary and the single process alike.
 */
import type { AdminOptions } from '../apps/admin.js';
import type { Config } from '../config/config.js';

export function liveAdminOptions(config: () => Config): AdminOptions {
  return {
    get token() {
      return config().adminToken;
    },
    get metricsToken() {
      return config().metricsToken;
    },
    get apiPath() {
      return config().apiPath;
    },
  };
}
