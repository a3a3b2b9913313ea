// An option the gateway does not know is an error of one line and exit 2, before anything else:
// it never starts serving with an option it ignored.
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { built } from '../support/spawned.js';

describe.runIf(built)('an unknown option', () => {
  it.each([
    [['--port=8080'], '--port=8080'],
    [['-t'], '-t'],
    [['serve'], 'serve'],
    [['--check', '--extra'], '--extra'],
  ])('%j: one line naming it, exit 2', (args, named) => {
    const run = runCli(args, { WIKIEDGE_UPSTREAM: 'http://wiki.invalid:80', WIKIEDGE_PORT: '1', WIKIEDGE_ADMIN_PORT: '1' });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(`wikiedge: unknown option ${JSON.stringify(named)} (try --help)\n`);
  });
});
