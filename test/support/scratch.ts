// Scratch folders for a test file (configuration files, secrets, log files), removed after the
// file's last test: created in a test or a hook alike, none left in /tmp by the suite. Importing
// this module registers the file-level afterAll (vitest collects each test file with its own
// module graph, so each file gets its own).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

const made: string[] = [];

afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
