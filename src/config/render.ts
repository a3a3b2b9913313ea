/**
 * The configuration as people read it, all from the table (fields.ts): the object logged at
 * start, `--print-config`, `--help`, and the configuration reference (docs/CONFIGURATION.md). Pure (no I/O);
 * secrets never leave as themselves.
 */
import { type Field, MadeAtStart, REQUIRED } from './field.js';
import { type Config, FIELD_LIST } from './fields.js';
import type { LoadedConfig, Origin } from './load.js';
import { MiB } from './parsers.js';

const REDACTED = '[redacted]';

/** A value as it may be shown: secrets redacted (an unset one stays empty), `describe` applied. */
function shown(field: Field<unknown>, value: unknown): unknown {
  if (field.secret) return isEmpty(value) ? '' : REDACTED;
  return field.describe ? field.describe(value) : value;
}

function isEmpty(value: unknown): boolean {
  return value === '' || (Buffer.isBuffer(value) && value.length === 0) || (Array.isArray(value) && value.length === 0);
}

/** A value as it would be written in the environment: lists comma-separated, rules as JSON. */
function envSpelling(value: unknown): string {
  if (Array.isArray(value)) return value.join(',');
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return String(value);
}

/** What is logged at start: every key, secrets redacted. */
export function describeConfig(config: Config): Record<string, unknown> {
  return Object.fromEntries(FIELD_LIST.map(([key, field]) => [key, shown(field, config[key])]));
}

const ORIGIN_NOTE: Record<Origin, (field: Field<unknown>) => string> = {
  default: (field) => (field.default instanceof MadeAtStart ? `default (${field.default.words})` : 'default'),
  environment: () => 'environment',
  'secret-file': (field) => `${field.env}_FILE`,
  'config-file': () => 'WIKIEDGE_CONFIG file',
};

/**
 * `--print-config`: the effective configuration, one `WIKIEDGE_KEY=value` line per key with the
 * value spelled as the environment takes it (setting it gives the same value back), secrets
 * redacted, then a comment saying where the value came from: `# default` for the keys nobody set.
 */
export function renderEffectiveConfig({ config, origins }: LoadedConfig): string {
  const lines = FIELD_LIST.map(([key, field]) => ({
    assignment: `${field.env}=${envSpelling(shown(field, config[key]))}`,
    note: ORIGIN_NOTE[origins[key]](field),
  }));
  const width = Math.max(...lines.map((l) => l.assignment.length));
  return lines.map((l) => `${l.assignment.padEnd(width)}  # ${l.note}\n`).join('');
}

/** The default in words for people: `(required)`, `(empty)`, or the value, plus MiB for byte sizes. */
function defaultParts(field: Field<unknown>): { literal?: string; words?: string; note?: string } {
  const d = field.default;
  if (d === REQUIRED) return { words: 'required' };
  if (d instanceof MadeAtStart) return { words: d.words };
  if (field.shownDefault !== undefined) return { literal: field.shownDefault };
  if (isEmpty(d)) return { words: 'empty' };
  if (field.unit === 'bytes' && typeof d === 'number' && d % MiB === 0) return { literal: String(d), note: `${d / MiB} MiB` };
  return { literal: envSpelling(d) };
}

function secretFileNote(field: Field<unknown>): string {
  return field.secret ? `. Also from a file: \`${field.env}_FILE\`` : '';
}

/**
 * The rows of the configuration reference (docs/CONFIGURATION.md), its header included: `| key | default | meaning |`.
 * scripts/config-reference.mjs prints them; test/unit/readme-config-reference.test.ts holds the
 * README to them.
 */
export function renderConfigReference(): string {
  const rows = FIELD_LIST.map(([, field]) => {
    const { literal, words, note } = defaultParts(field);
    const shownDefault = literal !== undefined ? `\`${literal}\`${note ? ` (${note})` : ''}` : `(${words})`;
    const meaning = `${field.doc}${secretFileNote(field)}`.replaceAll('|', '\\|');
    return `| \`${field.env}\` | ${shownDefault} | ${meaning} |\n`;
  });
  return ['| key | default | meaning |\n', '|---|---|---|\n', ...rows].join('');
}

/** Markdown to terminal text: the backticks go. */
function plain(markdown: string): string {
  return markdown.replaceAll('`', '');
}

/** Words of `text` in lines of at most `width` characters (a longer word gets a line of its own). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/**
 * `--help`'s configuration part: every key with its unit, default and meaning, the meaning
 * wrapped to `width` columns.
 */
export function renderConfigHelp(width = 80): string {
  const indent = '      ';
  const entries = FIELD_LIST.map(([, field]) => {
    const { literal, words, note } = defaultParts(field);
    const shownDefault = literal !== undefined ? `default ${literal}${note ? ` (${note})` : ''}` : words === 'required' ? 'required' : `default ${words}`;
    const head = `  ${field.env} [${field.unit}${field.secret ? ', secret' : ''}] ${shownDefault}`;
    const body = wrap(plain(`${field.doc}${secretFileNote(field)}`), width - indent.length).map((l) => `${indent}${l}`);
    return [head, ...body].join('\n');
  });
  return [
    'Configuration: environment variables, or the same keys in camelCase without the prefix in a',
    'YAML/JSON file named by WIKIEDGE_CONFIG (the environment wins).',
    '',
    ...entries,
    '',
  ].join('\n');
}
