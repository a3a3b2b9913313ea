/**
 * Configuration: read once at start from `WIKIEDGE_*` environment variables and an optional file
 * named by `WIKIEDGE_CONFIG` (YAML or JSON; the environment overrides the file), validated, then
 * deep-frozen. Every error names the key and the rule, as @fastify/http-proxy's options do.
 *
 * Every key is one entry of the table in config/fields.ts, the single source of the `Config`
 * type, of validation, of the logged configuration, of --help and --print-config, and of the
 * configuration reference (docs/CONFIGURATION.md). This module is the door the rest of src/ goes through.
 */
export { ConfigError } from './field.js';
export { CONFIG_KEYS, type Config, type ConfigKey, usesRedis } from './fields.js';
export {
  type ConfigOrigins,
  type ConfigSources,
  configFromSources,
  type LoadedConfig,
  loadConfig,
  loadConfigWithOrigins,
  type Origin,
  readConfigSources,
  SECRET_FILE_KEYS,
} from './load.js';
export type { AccessLogFormat, DebuginfoMode, LogFormat, LogLevel, ModuleRule } from './parsers.js';
export { redactUrlPassword } from './redact.js';
export { describeConfig, renderConfigHelp, renderConfigReference, renderEffectiveConfig } from './render.js';
