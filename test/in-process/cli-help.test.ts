// `--help` (and `-h`) prints the usage and every configuration key with its default, then exits 0
// without listening or needing a configuration at all.
import { describe, expect, it } from 'vitest';
import { FIELD_LIST } from '../../src/config/fields.js';
import { runCli } from '../support/cli.js';
import { built } from '../support/spawned.js';

describe.runIf(built)('--help', () => {
  it.each([['--help'], ['-h']])('%s: usage, options, signals and every key with its default; exit 0', (option) => {
    const run = runCli([option], {});
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/^Usage: node dist\/main\.js \[--check \| --print-config \| --help\]/);
    for (const word of ['--check', '--print-config', 'SIGHUP', 'SIGTERM']) expect(run.stdout).toContain(word);
    for (const [, field] of FIELD_LIST) expect(run.stdout).toMatch(new RegExp(`^  ${field.env} \\[`, 'm'));
    expect(run.stdout).toContain('  WIKIEDGE_PORT [port] default 8080');
    expect(run.stdout).toContain('  WIKIEDGE_UPSTREAM [url] required');
  });
});
