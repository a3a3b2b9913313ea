// `--help`'s configuration part (renderConfigHelp): every key with its unit, its default and its
// documentation, in terminal text wrapped to the width asked for.
import { describe, expect, it } from 'vitest';
import { renderConfigHelp } from '../../src/config/config.js';
import { FIELD_LIST } from '../../src/config/fields.js';

const help = renderConfigHelp();

/** The entry of one key: its head line and the indented lines under it. */
function entry(text: string, env: string): string[] {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`  ${env} [`));
  if (start < 0) throw new Error(`${env} not in the help`);
  const rest = lines.slice(start + 1);
  const end = rest.findIndex((l) => !l.startsWith('      '));
  return [lines[start]!, ...rest.slice(0, end < 0 ? rest.length : end)];
}

describe('--help: the configuration keys', () => {
  it.each(FIELD_LIST.map(([, field]) => [field.env, field]))('names %s with its unit and its documentation', (env, field) => {
    const [head, ...body] = entry(help, env);
    expect(head).toContain(`[${field.unit}`);
    const words = body.map((l) => l.trim()).join(' ');
    expect(words).toContain(field.doc.replaceAll('`', '').replace(/\s+/g, ' '));
  });

  it('shows the default, its size in MiB, or that there is none', () => {
    expect(entry(help, 'WIKIEDGE_UPSTREAM')[0]).toBe('  WIKIEDGE_UPSTREAM [url] required');
    expect(entry(help, 'WIKIEDGE_PORT')[0]).toBe('  WIKIEDGE_PORT [port] default 8080');
    expect(entry(help, 'WIKIEDGE_CACHE_SHARED_MAX_BYTES')[0]).toBe('  WIKIEDGE_CACHE_SHARED_MAX_BYTES [bytes] default 268435456 (256 MiB)');
    expect(entry(help, 'WIKIEDGE_LOG_HITS')[0]).toBe('  WIKIEDGE_LOG_HITS [ratio] default true');
    expect(entry(help, 'WIKIEDGE_CREDENTIAL_COOKIES')[0]).toBe('  WIKIEDGE_CREDENTIAL_COOKIES [list] default empty');
    expect(entry(help, 'WIKIEDGE_TRUSTED_PROXIES')[0]).toBe('  WIKIEDGE_TRUSTED_PROXIES [list] default 127.0.0.1,::1');
  });

  it('says which keys are secrets and that they may come from <ENV>_FILE', () => {
    const [head, ...body] = entry(help, 'WIKIEDGE_IDENTITY_SECRET');
    expect(head).toBe('  WIKIEDGE_IDENTITY_SECRET [text, secret] default random at start');
    expect(body.join(' ')).toContain('Also from a file: WIKIEDGE_IDENTITY_SECRET_FILE');
    expect(entry(help, 'WIKIEDGE_ADMIN_TOKEN')[0]).toBe('  WIKIEDGE_ADMIN_TOKEN [text, secret] default empty');
  });

  it('wraps the documentation to the width asked for', () => {
    for (const width of [60, 80, 120]) {
      const text = renderConfigHelp(width);
      const docLines = text.split('\n').filter((l) => l.startsWith('      '));
      // Only a word longer than the width may stick out (the modules example).
      for (const l of docLines) if (l.length > width) expect(l.trim()).not.toContain(' ');
      expect(docLines.length).toBeGreaterThanOrEqual(FIELD_LIST.length);
    }
  });
});
