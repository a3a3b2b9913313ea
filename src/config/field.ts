/**
 * What one configuration key is: the shape of an entry of the table in fields.ts, the default
 * markers, and the error every rule throws. No key is named here.
 */

export class ConfigError extends Error {
  constructor(
    readonly key: string,
    rule: string,
  ) {
    super(`${key}: ${rule}`);
    this.name = 'ConfigError';
  }
}

/** What a value counts or holds; --help shows it beside the default. */
export type Unit =
  | 'ms'
  | 'seconds'
  | 'bytes'
  | 'count'
  | 'per-second'
  | 'ratio'
  | 'boolean'
  | 'choice'
  | 'list'
  | 'json'
  | 'url'
  | 'host'
  | 'port'
  | 'path'
  | 'name'
  | 'text';

/** The default of a key without one: the process does not start unless it is set. */
export const REQUIRED: unique symbol = Symbol('required');

/** A default made anew at each start (a random key), described in words since it cannot be shown. */
export class MadeAtStart<T> {
  constructor(
    readonly make: () => T,
    readonly words: string,
  ) {}
}

export interface Field<T> {
  /** The environment variable. The file key is the entry's name in the table (camelCase). */
  readonly env: string;
  /**
   * Validates a value that is set (neither undefined nor ''): a string from the environment, any
   * YAML/JSON value from the file. Throws ConfigError(key, rule) naming the rule broken.
   */
  readonly parse: (value: unknown, key: string) => T;
  /** Used when the key is not set (undefined, or '' in either source). */
  readonly default: T | typeof REQUIRED | MadeAtStart<T>;
  readonly unit: Unit;
  /** One line of Markdown: the README's "meaning" column and --help's text. */
  readonly doc: string;
  /** Redacted wherever the configuration is described; may also come from the file named by `<env>_FILE`. */
  readonly secret?: boolean;
  /** The default as the README and --help write it, when the value itself would mislead (`false` for 0). */
  readonly shownDefault?: string;
  /** The value as it is logged and printed, when not as itself (a URL's origin, a password cut out). */
  readonly describe?: (value: T) => string;
  /**
   * The key's former name (its file key; the environment name follows, envNameOf): still taken,
   * with a warning at start, so that a renamed key does not stop a deployment that sets it.
   */
  readonly formerly?: string;
}

/**
 * One entry of the table. T is inferred from `parse` alone, so the default, `describe` and the
 * derived `Config` type follow the parser's return type.
 */
export function field<T>(spec: {
  env: string;
  parse: (value: unknown, key: string) => T;
  default: NoInfer<T> | typeof REQUIRED | MadeAtStart<NoInfer<T>>;
  unit: Unit;
  doc: string;
  secret?: boolean;
  shownDefault?: string;
  describe?: (value: NoInfer<T>) => string;
  formerly?: string;
}): Field<T> {
  return spec;
}

/** The type a field's parser gives, hence the type of its key in `Config`. */
export type ValueOf<F> = F extends Field<infer T> ? T : never;

/** Not set: both sources treat an empty value as absent, so `WIKIEDGE_PORT=` means the default. */
export function isUnset(v: unknown): boolean {
  return v === undefined || v === '';
}

/** The parsed value, or `fallback` when unset (for the rules nested inside a key's value). */
export function parseOr<T>(v: unknown, fallback: T, parse: (value: unknown, key: string) => T, key: string): T {
  return isUnset(v) ? fallback : parse(v, key);
}

/** The environment name of a file key: `WIKIEDGE_` + the key in SNAKE_CASE (`readyTimeoutMs` → `WIKIEDGE_READY_TIMEOUT_MS`). */
export function envNameOf(fileKey: string): string {
  return `WIKIEDGE_${fileKey.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
}
