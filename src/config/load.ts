/**
 * Loading: read once at start from `WIKIEDGE_*` environment variables and an optional file
 * named by `WIKIEDGE_CONFIG` (YAML or JSON; the environment overrides the file), each value
 * validated by its entry of the table (fields.ts), then the rules between keys, then deep-frozen.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { ConfigError, type Field, isUnset, MadeAtStart, REQUIRED } from './field.js';
import { CONFIG_KEYS, type Config, type ConfigKey, FIELD_LIST, FIELDS, NOT_ABOVE } from './fields.js';

/** Where a key's value came from (--print-config marks the defaults). */
export type Origin = 'default' | 'environment' | 'secret-file' | 'config-file';
export type ConfigOrigins = Readonly<Record<ConfigKey, Origin>>;

export interface LoadedConfig {
  readonly config: Config;
  readonly origins: ConfigOrigins;
}

type Raw = Record<string, unknown>;

/** `WIKIEDGE_IDENTITY_SECRET_FILE` and friends: the secret is the file's content. */
/** `WIKIEDGE_IDENTITY_SECRET_FILE` and friends: a secret read from a file (a container secrets mount). */
export const SECRET_FILE_KEYS: readonly string[] = FIELD_LIST.filter(([, f]) => f.secret).map(([, f]) => `${f.env}_FILE`);

/** A secret's value from `<env>_FILE`: the file's content without its final newline. */
function readSecretFile(env: NodeJS.ProcessEnv, field: Field<unknown>): string | undefined {
  const path = env[`${field.env}_FILE`];
  if (path === undefined || path === '') return undefined;
  if (env[field.env] !== undefined && env[field.env] !== '')
    throw new ConfigError(`${field.env}_FILE`, `must not be set together with ${field.env}`);
  try {
    return readFileSync(path, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    throw new ConfigError(`${field.env}_FILE`, `cannot read ${path}: ${(err as Error).message}`);
  }
}

function readFile(path: string): Raw {
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
    throw new ConfigError('WIKIEDGE_CONFIG', `${path} is not valid YAML/JSON: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw new ConfigError('WIKIEDGE_CONFIG', `${path} must hold a mapping of keys`);
  }
  for (const k of Object.keys(doc)) {
    if (!Object.hasOwn(FIELDS, k)) throw new ConfigError(k, `is not a known configuration key (in ${path})`);
  }
  return doc as Raw;
}

function checkNames(env: NodeJS.ProcessEnv): void {
  for (const name of Object.keys(env)) {
    if (name.startsWith('WIKIEDGE_') && name !== 'WIKIEDGE_CONFIG' && !CONFIG_KEYS.includes(name) && !SECRET_FILE_KEYS.includes(name)) {
      // A typo in an operator's variable must not silently fall back to a default.
      if (!name.startsWith('WIKIEDGE_TEST_')) throw new ConfigError(name, 'is not a known configuration key');
    }
  }
}

function defaultOf(field: Field<unknown>): unknown {
  if (field.default === REQUIRED) throw new ConfigError(field.env, 'is required');
  if (field.default instanceof MadeAtStart) return field.default.make();
  return field.default;
}

/** One key: `<env>_FILE` for a secret, else the environment, else the file, else the default. */
function resolve(key: ConfigKey, field: Field<unknown>, env: NodeJS.ProcessEnv, file: Raw): { value: unknown; origin: Origin } {
  const fromSecretFile = field.secret ? readSecretFile(env, field) : undefined;
  const fromEnv = fromSecretFile || env[field.env];
  if (!isUnset(fromEnv)) return { value: field.parse(fromEnv, field.env), origin: fromSecretFile ? 'secret-file' : 'environment' };
  if (!isUnset(file[key])) return { value: field.parse(file[key], field.env), origin: 'config-file' };
  return { value: defaultOf(field), origin: 'default' };
}

function checkBetweenKeys(config: Config): void {
  for (const [key, limit] of NOT_ABOVE) {
    if (config[key] > config[limit]) throw new ConfigError(FIELDS[key].env, `must not exceed ${FIELDS[limit].env}`);
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value) && !Buffer.isBuffer(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** Validate and freeze, saying where each value came from. Throws ConfigError naming the first bad key. */
export function loadConfigWithOrigins(env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  checkNames(env);
  const file = env['WIKIEDGE_CONFIG'] ? readFile(env['WIKIEDGE_CONFIG']) : {};
  const values: Record<string, unknown> = {};
  const origins: Record<string, Origin> = {};
  for (const [key, field] of FIELD_LIST) {
    const { value, origin } = resolve(key, field, env, file);
    values[key] = value;
    origins[key] = origin;
  }
  const config = values as Config;
  checkBetweenKeys(config);
  return { config: deepFreeze(config), origins: Object.freeze(origins as Record<ConfigKey, Origin>) };
}

/** Validate and freeze. Throws ConfigError naming the first bad key. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return loadConfigWithOrigins(env).config;
}
