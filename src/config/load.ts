/**
 * Loading, in two steps, so that a cluster primary can validate a configuration once and hand
 * its workers the very inputs it validated (cluster/reload.ts):
 *
 * - readConfigSources (I/O): the `WIKIEDGE_*` environment, the YAML or JSON file named by
 *   `WIKIEDGE_CONFIG`, and the secrets named by `<ENV>_FILE`, each read once;
 * - configFromSources: each value validated by its entry of the table (fields.ts), the
 *   environment over the file over the default, then the rules between keys, then deep-frozen.
 *   Pure but for one look at the file system: whether WIKIEDGE_ACCESS_LOG_FILE can be appended
 *   to (checkAccessLogFile), so that --check, the start and a reload refuse it alike.
 *
 * loadConfig does both. Every error is a ConfigError naming the key.
 */
import { accessSync, constants, lstatSync, readFileSync, readlinkSync, type Stats, statSync } from 'node:fs';
import { dirname, resolve as resolvePath } from 'node:path';
import { isIP } from 'node:net';
import { parse as parseYaml } from 'yaml';
import { ConfigError, envNameOf, type Field, isUnset, MadeAtStart, REQUIRED } from './field.js';
import { CONFIG_KEYS, type Config, type ConfigKey, FIELD_LIST, FIELDS, NOT_ABOVE, usesRedis } from './fields.js';
import { describeJsonError } from './json-error.js';

/** Where a key's value came from (--print-config marks the defaults). */
export type Origin = 'default' | 'environment' | 'secret-file' | 'config-file';
export type ConfigOrigins = Readonly<Record<ConfigKey, Origin>>;

export interface LoadedConfig {
  readonly config: Config;
  readonly origins: ConfigOrigins;
  /** What the operator should change, though the configuration is valid (a key set by its former name). */
  readonly warnings: readonly string[];
}

/**
 * What a configuration is made of, as read: plain data (strings and the file's parsed document),
 * so that it can travel to a cluster worker over IPC and be validated there to the same result.
 */
export interface ConfigSources {
  /** The `WIKIEDGE_*` environment variables. */
  readonly env: Readonly<Record<string, string>>;
  /** The document of the file named by `WIKIEDGE_CONFIG`, or {} without one. */
  readonly file: Readonly<Record<string, unknown>>;
  /** The content of each secret read from `<ENV>_FILE`, by `<ENV>`, without its final newline. */
  readonly secretFiles: Readonly<Record<string, string>>;
}

type Raw = Record<string, unknown>;

/** `WIKIEDGE_IDENTITY_SECRET_FILE` and friends: a secret read from a file (a container secrets mount). */
export const SECRET_FILE_KEYS: readonly string[] = FIELD_LIST.filter(([, f]) => f.secret).map(([, f]) => `${f.env}_FILE`);

/** Keys renamed, under their former names: still taken, with a warning. */
const FORMER_ENV = new Map(FIELD_LIST.flatMap(([, f]) => (f.formerly ? [[envNameOf(f.formerly), f] as const] : [])));
const FORMER_FILE_KEYS = new Set(FIELD_LIST.flatMap(([, f]) => (f.formerly ? [f.formerly] : [])));

/** Read what the configuration is made of. Throws ConfigError for a file that cannot be read or parsed. */
export function readConfigSources(env: NodeJS.ProcessEnv = process.env): ConfigSources {
  const ours: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (name.startsWith('WIKIEDGE_') && value !== undefined) ours[name] = value;
  checkNames(ours);
  const secretFiles: Record<string, string> = {};
  for (const [, field] of FIELD_LIST) {
    const path = field.secret ? ours[`${field.env}_FILE`] : undefined;
    if (path === undefined || path === '') continue;
    if (!isUnset(ours[field.env])) throw new ConfigError(`${field.env}_FILE`, `must not be set together with ${field.env}`);
    try {
      secretFiles[field.env] = readFileSync(path, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      throw new ConfigError(`${field.env}_FILE`, `cannot read ${path}: ${(err as Error).message}`);
    }
  }
  const file = ours['WIKIEDGE_CONFIG'] ? readFile(ours['WIKIEDGE_CONFIG']) : {};
  return { env: ours, file, secretFiles };
}

function readFile(path: string): Raw {
  const doc = readConfigDocument(path);
  for (const k of Object.keys(doc)) {
    if (!Object.hasOwn(FIELDS, k) && !FORMER_FILE_KEYS.has(k)) throw new ConfigError(k, `is not a known configuration key (in ${path})`);
  }
  return doc;
}

/**
 * The WIKIEDGE_CONFIG file's mapping of keys, its keys not checked (the container's health check
 * reads two of them from a file that may have stopped validating: apps/healthcheck.ts).
 */
export function readConfigDocument(path: string): Raw {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError('WIKIEDGE_CONFIG', `cannot read ${path}: ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    // The yaml package says where itself ("… at line 2, column 1:" and a snippet): its first line.
    const where = path.endsWith('.json')
      ? `not valid JSON ${describeJsonError(text)}`
      : `not valid YAML: ${(err as Error).message.split('\n', 1)[0]!.replace(/:$/, '')}`;
    throw new ConfigError('WIKIEDGE_CONFIG', `${path} is ${where}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw new ConfigError('WIKIEDGE_CONFIG', `${path} must hold a mapping of keys`);
  }
  return doc as Raw;
}

/**
 * Variables of ours that are not configuration: WIKIEDGE_CONFIG names the file;
 * WIKIEDGE_CLUSTER_WORKER marks a cluster primary's workers (cluster/worker-env.ts).
 */
const NOT_KEYS = ['WIKIEDGE_CONFIG', 'WIKIEDGE_CLUSTER_WORKER'];

function checkNames(env: Readonly<Record<string, string>>): void {
  for (const name of Object.keys(env)) {
    if (NOT_KEYS.includes(name) || CONFIG_KEYS.includes(name) || SECRET_FILE_KEYS.includes(name) || FORMER_ENV.has(name)) continue;
    // A typo in an operator's variable must not silently fall back to a default.
    if (!name.startsWith('WIKIEDGE_TEST_')) throw new ConfigError(name, 'is not a known configuration key');
  }
}

function defaultOf(field: Field<unknown>): unknown {
  if (field.default === REQUIRED) throw new ConfigError(field.env, 'is required');
  if (field.default instanceof MadeAtStart) return field.default.make();
  return field.default;
}

/**
 * One key: its `<env>_FILE` secret, else the environment, else the file, else the default. A key
 * set only under its former name is taken from there, with a warning.
 */
function resolve(key: ConfigKey, field: Field<unknown>, sources: ConfigSources, warnings: string[]): { value: unknown; origin: Origin } {
  const resolved = resolveFrom(key, field, sources, warnings);
  // The environment wins over the file, as the docs say; a file that sets a key otherwise is
  // edited for nothing, and a reload reported complete with nothing changed
  // (test/unit/config-file-value-shadowed-by-the-environment-is-said.test.ts).
  if (
    (resolved.origin === 'environment' || resolved.origin === 'secret-file') &&
    !isUnset(sources.file[key]) &&
    !sameValue(field, sources.file[key], resolved.value)
  ) {
    const where = resolved.origin === 'secret-file' ? `${field.env}_FILE` : `the environment (${field.env})`;
    warnings.push(`${key} in the WIKIEDGE_CONFIG file is not used: ${where} sets it, and wins`);
  }
  return resolved;
}

/** Whether a file's raw value parses to `value` (one that does not parse is not the same). */
function sameValue(field: Field<unknown>, raw: unknown, value: unknown): boolean {
  try {
    return JSON.stringify(field.parse(raw, field.env)) === JSON.stringify(value);
  } catch {
    return false;
  }
}

function resolveFrom(key: ConfigKey, field: Field<unknown>, sources: ConfigSources, warnings: string[]): { value: unknown; origin: Origin } {
  const { env, file, secretFiles } = sources;
  const fromSecretFile = secretFiles[field.env];
  if (!isUnset(fromSecretFile)) return { value: field.parse(fromSecretFile, field.env), origin: 'secret-file' };
  const former = field.formerly === undefined ? undefined : envNameOf(field.formerly);
  if (former !== undefined && !isUnset(env[former])) {
    if (!isUnset(env[field.env])) throw new ConfigError(former, `must not be set together with ${field.env}, its new name`);
    warnings.push(`${former} is now called ${field.env}: rename it`);
    return { value: field.parse(env[former], former), origin: 'environment' };
  }
  if (!isUnset(env[field.env])) return { value: field.parse(env[field.env], field.env), origin: 'environment' };
  if (!isUnset(file[key])) return { value: field.parse(file[key], field.env), origin: 'config-file' };
  if (field.formerly !== undefined && !isUnset(file[field.formerly])) {
    warnings.push(`${field.formerly} (in the WIKIEDGE_CONFIG file) is now called ${key}: rename it`);
    return { value: field.parse(file[field.formerly], field.env), origin: 'config-file' };
  }
  return { value: defaultOf(field), origin: 'default' };
}

function checkBetweenKeys(config: Config, origins: Readonly<Record<string, Origin>>): void {
  for (const [key, limit] of NOT_ABOVE) {
    if (config[key] > config[limit]) throw new ConfigError(FIELDS[key].env, `must not exceed ${FIELDS[limit].env}`);
  }
  // Replicas sharing Redis must name a session alike: with a secret drawn by each at start, a
  // logout (or a rights change) on one names other slots than the ones another stored under, in
  // its tier and in Redis, and the old cookie keeps getting the session's answers there.
  checkRedisKeys(config);
  if (usesRedis(config) && origins['identitySecret'] === 'default')
    throw new ConfigError(
      FIELDS.identitySecret.env,
      `is required with ${(config.redisUrl ? FIELDS.redisUrl : config.redisClusterNodes.length > 0 ? FIELDS.redisClusterNodes : FIELDS.redisSentinels).env}: every replica sharing Redis must key sessions with the same secret (or WIKIEDGE_IDENTITY_SECRET_FILE)`,
    );
}

/**
 * The admin listener takes `POST /purge` from whoever reaches it. On a loopback address that is
 * this host; on any other (`0.0.0.0` in a container, say) it is the network, so a token is
 * required there unless the operator names the risk (WIKIEDGE_ADMIN_INSECURE_NO_TOKEN).
 */
function checkAdminExposure(config: Config): void {
  if (config.adminToken !== '' || config.adminInsecureNoToken || isLoopbackHost(config.adminHost)) return;
  throw new ConfigError(
    FIELDS.adminToken.env,
    `is required when ${FIELDS.adminHost.env} (${config.adminHost}) is not a loopback address: anyone who reaches the admin listener could purge the cache. Set ${FIELDS.adminToken.env} or ${FIELDS.adminToken.env}_FILE, bind ${FIELDS.adminHost.env}=127.0.0.1, or set ${FIELDS.adminInsecureNoToken.env}=true to accept the risk`,
  );
}

/** `127.0.0.0/8`, `::1` (also bracketed or IPv4-mapped), `localhost`: addresses only this host reaches. */
export function isLoopbackHost(host: string): boolean {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.startsWith('::ffff:')) h = h.slice(7);
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

/**
 * One way to reach Redis (a URL, Sentinels, or a cluster's seed nodes), and the keys that only mean something with one of them. --check says so too: nothing
 * here connects anywhere (what the server turns out to be is checked at start, redis/connection.ts).
 */
function checkRedisKeys(config: Config): void {
  const env = (key: ConfigKey) => FIELDS[key].env;
  const ways = (['redisUrl', 'redisSentinels', 'redisClusterNodes'] as const).filter((k) => config[k].length > 0);
  if (ways.length > 1) throw new ConfigError(env(ways[1]!), `must not be set together with ${env(ways[0]!)}: Redis is reached one way`);
  const sentinels = config.redisSentinels.length > 0;
  if (sentinels && !config.redisSentinelMaster)
    throw new ConfigError(
      env('redisSentinelMaster'),
      `is required with ${env('redisSentinels')}: the name the Sentinels monitor the primary under (sentinel monitor <name> ...)`,
    );
  // Without Sentinels these would leave the gateway without Redis, or without TLS, unsaid. (A
  // password that nothing uses is harmless, and a secret mounted for every deployment alike.)
  if (!sentinels && config.redisSentinelMaster)
    throw new ConfigError(env('redisSentinelMaster'), `is used only with ${env('redisSentinels')}, which is not set`);
  if (config.redisUrl && config.redisTls)
    throw new ConfigError(
      env('redisTls'),
      `is used only with ${env('redisSentinels')} or ${env('redisClusterNodes')}: with ${env('redisUrl')} say rediss:// instead`,
    );
  if (config.redisUrl) {
    const url = new URL(config.redisUrl);
    if (config.redisPassword && (url.password || url.searchParams.has('password')))
      throw new ConfigError(env('redisPassword'), `must not be set together with a password in ${env('redisUrl')}`);
    if (config.redisUsername && url.username) throw new ConfigError(env('redisUsername'), `must not be set together with a user in ${env('redisUrl')}`);
  }
}

/**
 * WIKIEDGE_ACCESS_LOG_FILE must be a file this process can append to, or one it can create. A
 * file that cannot be opened is otherwise found only when the access log opens it
 * (observe/logging.ts), after the configuration was accepted: --check said OK, a reload went
 * ahead and the access log fell back to standard output. Nothing is opened, created or written
 * here (opening a FIFO would hand its waiting reader an end of file): an existing regular file
 * must be writable (access(2), which answers EROFS on a read-only file system, as a container's
 * `read_only: true` root is); a link is judged by what it names, a dangling one by its target's
 * directory; anything else that exists (a FIFO, a socket, /dev/stdout) is taken as it is; for a
 * new file, its directory must be one this process may write in.
 * test/in-process/access-log-file-that-cannot-be-opened-is-refused.test.ts.
 */
function checkAccessLogFile(file: string): void {
  if (file === '') return;
  const key = FIELDS.accessLogFile.env;
  let target = resolvePath(file);
  for (let links = 0; ; links++) {
    let st: Stats;
    try {
      st = lstatSync(target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') break;
      throw new ConfigError(key, `cannot append to ${file}: ${(err as Error).message}`);
    }
    if (st.isSymbolicLink() && links < MAX_LINKS) {
      target = resolvePath(dirname(target), readlinkSync(target));
      continue;
    }
    if (!st.isFile()) return;
    try {
      accessSync(target, constants.W_OK);
      return;
    } catch (err) {
      throw new ConfigError(key, `cannot append to ${file}: ${(err as Error).message}`);
    }
  }
  const dir = dirname(target);
  try {
    if (!statSync(dir).isDirectory()) throw new Error(`${dir} is not a directory`);
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (err) {
    throw new ConfigError(key, `cannot create ${file}: ${(err as Error).message}`);
  }
}
/** Links followed to find what WIKIEDGE_ACCESS_LOG_FILE names (as the kernel's own limit, MAXSYMLINKS). */
const MAX_LINKS = 40;

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value) && !Buffer.isBuffer(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/**
 * Validate and freeze what was read, saying where each value came from. Throws ConfigError naming
 * the first bad key. `checkFiles` false: the files it names are not looked at (a cluster worker
 * takes sources its primary checked; a log file that fails later falls back to standard output
 * there, as in any running process, rather than keep the worker from restarting).
 */
export function configFromSources(sources: ConfigSources, { checkFiles = true }: { readonly checkFiles?: boolean } = {}): LoadedConfig {
  checkNames(sources.env);
  const values: Record<string, unknown> = {};
  const origins: Record<string, Origin> = {};
  const warnings: string[] = [];
  for (const [key, field] of FIELD_LIST) {
    const { value, origin } = resolve(key, field, sources, warnings);
    values[key] = value;
    origins[key] = origin;
  }
  const config = values as Config;
  checkBetweenKeys(config, origins);
  checkAdminExposure(config);
  if (checkFiles) checkAccessLogFile(config.accessLogFile);
  return { config: deepFreeze(config), origins: Object.freeze(origins as Record<ConfigKey, Origin>), warnings: Object.freeze(warnings) };
}

/** Read, validate and freeze, saying where each value came from. Throws ConfigError naming the first bad key. */
export function loadConfigWithOrigins(env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  return configFromSources(readConfigSources(env));
}

/** Read, validate and freeze. Throws ConfigError naming the first bad key. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return loadConfigWithOrigins(env).config;
}
