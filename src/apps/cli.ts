/**
 * The command line, as an nginx or Varnish operator expects it: options that answer and exit,
 * never listening (`nginx -t`, `nginx -T`, `varnishd -C`). Everything the gateway serves with is
 * configured by the environment and the WIKIEDGE_CONFIG file (config/), so the only options are
 * the ones that look at that configuration.
 *
 *   (none)           serve (main.ts)
 *   --check          validate the configuration: `configuration OK` and exit 0, or the error
 *                    naming the key and exit 2 (the code a bad configuration exits with at start)
 *   --print-config   the effective configuration, secrets redacted, each value with where it
 *                    came from (config/render.ts), then exit 0; exit 2 if it is invalid
 *   --help, -h       usage and every key with its default, exit 0
 *
 * Anything else is an error of one line and exit 2.
 */
import { ConfigError, loadConfigWithOrigins, renderConfigHelp, renderEffectiveConfig } from '../config/config.js';
import { restartOnlyVariables } from '../config/reload-keys.js';

export type Command = 'serve' | 'check' | 'print-config' | 'help' | { readonly unknown: string };

const OPTIONS: Readonly<Record<string, Command>> = {
  '--check': 'check',
  '--print-config': 'print-config',
  '--help': 'help',
  '-h': 'help',
};

/** The command the arguments ask for (pure): one option at most. */
export function parseCommand(args: readonly string[]): Command {
  if (args.length === 0) return 'serve';
  const [first, ...rest] = args;
  const command = OPTIONS[first!];
  if (command === undefined) return { unknown: first! };
  if (rest.length > 0) return { unknown: rest[0]! };
  return command;
}

/** Exit codes: 2 is a usage or configuration error, as at start. */
export const EXIT_OK = 0;
export const EXIT_CONFIG = 2;

export function usage(): string {
  return [
    'Usage: node dist/main.js [--check | --print-config | --help]',
    '       (npm start -- --check; in the image: docker run … wikiedge node dist/main.js --check)',
    '',
    "wikiedge: a caching gateway for a MediaWiki's /w/api.php. Without an option it serves.",
    '',
    '  --check          validate the configuration and exit: "configuration OK" (exit 0), or the',
    '                   error naming the key (exit 2); like nginx -t. Nothing is bound or asked.',
    '  --print-config   print the effective configuration, secrets redacted, with where each',
    '                   value came from, then exit; like nginx -T',
    '  --help, -h       this text',
    '',
    'Signals: SIGTERM or SIGINT drain and exit 0. SIGUSR1 reopens WIKIEDGE_ACCESS_LOG_FILE.',
    'SIGHUP reloads, refusing no connection and failing no request: the WIKIEDGE_CONFIG file and',
    '<KEY>_FILE secrets are read again (the environment is the one given at start: a key set',
    'there keeps its value until a restart) and every key is applied, the cache kept, except',
    'these, which need a restart (a reload that changes one is refused):',
    ...restartOnly(),
    'An invalid configuration is refused with one error line naming the key, and the old one',
    'keeps serving (docs/OPERATIONS.md, "Reload").',
    '',
  ].join('\n');
}

/** The restart-only variables, three a line. */
function restartOnly(): string[] {
  const names = restartOnlyVariables();
  const lines: string[] = [];
  for (let i = 0; i < names.length; i += 3) lines.push(`  ${names.slice(i, i + 3).join(', ')}`);
  return lines;
}

export interface Output {
  write(text: string): unknown;
}

/** Run a command that does not serve; returns the exit code. */
export function runCommand(command: Exclude<Command, 'serve'>, env: NodeJS.ProcessEnv, out: Output, err: Output): number {
  if (typeof command === 'object') {
    err.write(`wikiedge: unknown option ${JSON.stringify(command.unknown)} (try --help)\n`);
    return EXIT_CONFIG;
  }
  if (command === 'help') {
    out.write(`${usage()}\n${renderConfigHelp()}`);
    return EXIT_OK;
  }
  try {
    const loaded = loadConfigWithOrigins(env);
    for (const warning of loaded.warnings) err.write(`wikiedge: warning: ${warning}\n`);
    out.write(command === 'check' ? 'wikiedge: configuration OK\n' : renderEffectiveConfig(loaded));
    return EXIT_OK;
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    err.write(`wikiedge: invalid configuration: ${e.message}\n`);
    return EXIT_CONFIG;
  }
}
