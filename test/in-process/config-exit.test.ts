// `npm start` with a bad value exits non-zero with a message naming the key.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const main = path.resolve(import.meta.dirname, '../../dist/main.js');

describe('start-up with a bad configuration', () => {
  it.runIf(existsSync(main))('exits non-zero and names the key', () => {
    const run = spawnSync(process.execPath, [main], {
      env: {
        PATH: process.env['PATH'] ?? '',
        WIKIEDGE_UPSTREAM: 'http://127.0.0.1:1',
        WIKIEDGE_ADMIN_PORT: '-5',
      },
      encoding: 'utf8',
      timeout: 10_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('WIKIEDGE_ADMIN_PORT');
    expect(run.stderr).toContain('integer from 0 to 65535');
  });

  it('dist/main.js exists (npm test builds before it runs the suites)', () => {
    expect(existsSync(main)).toBe(true);
  });
});
