/**
 * Keys a reload (SIGHUP, cluster/reload.ts) cannot change: the listeners are bound, the workers
 * counted, and the logger made (pretty or JSON lines), once. Every other key is applied by a
 * reload, when it comes from the WIKIEDGE_CONFIG file or a `<KEY>_FILE` secret: the environment
 * is the one the process was given at start.
 */
import { type ConfigKey, FIELDS } from './fields.js';

export const FIXED_ON_RELOAD: readonly ConfigKey[] = ['host', 'port', 'adminHost', 'adminPort', 'workers', 'logFormat'];

/** Their variables, for --help and the README. */
export function restartOnlyVariables(): string[] {
  return FIXED_ON_RELOAD.map((key) => FIELDS[key].env);
}
