// The environment wins over the WIKIEDGE_CONFIG file (docs/CONFIGURATION.md). The documented
// Docker deployment sets its keys in the environment: an operator who then mounts a file and
// edits a key there (WIKIEDGE_PURGE_ALLOW, say) and reloads was told "reload complete" with
// nothing changed, and nothing said the file's value was not used. It is said now, at start and
// at each reload, naming the key, never the values.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfigWithOrigins } from '../../src/config/config.js';
import { scratchDir } from '../support/scratch.js';

const base = { WIKIEDGE_UPSTREAM: 'http://wiki:80' };
const withFile = (yaml: string) => {
  const file = path.join(scratchDir('wikiedge-shadowed-'), 'wikiedge.yaml');
  writeFileSync(file, yaml);
  return file;
};

describe('a key set both in the environment and in the file', () => {
  it('to another value: the environment`s is taken, and the file`s is said to be unused', () => {
    const file = withFile('purgeAllow: 10.0.0.0/8\n');
    const loaded = loadConfigWithOrigins({ ...base, WIKIEDGE_CONFIG: file, WIKIEDGE_PURGE_ALLOW: '172.30.0.128/25' });
    expect(loaded.origins.purgeAllow).toBe('environment');
    expect(loaded.warnings).toEqual(['purgeAllow in the WIKIEDGE_CONFIG file is not used: the environment (WIKIEDGE_PURGE_ALLOW) sets it, and wins']);
    expect(loaded.warnings.join()).not.toContain('10.0.0.0');
  });

  it('a secret from its _FILE over the file`s, said without either value', () => {
    const secret = path.join(scratchDir('wikiedge-shadowed-secret-'), 'secret');
    writeFileSync(secret, 'from-the-secret-file-0123456789\n');
    const file = withFile('identitySecret: from-the-config-file-0123456789\n');
    const loaded = loadConfigWithOrigins({ ...base, WIKIEDGE_CONFIG: file, WIKIEDGE_IDENTITY_SECRET_FILE: secret });
    expect(loaded.warnings).toEqual(['identitySecret in the WIKIEDGE_CONFIG file is not used: WIKIEDGE_IDENTITY_SECRET_FILE sets it, and wins']);
    expect(loaded.warnings.join()).not.toContain('0123456789');
  });

  it('to the same value, however spelled: nothing to say', () => {
    const file = withFile('maxUrlBytes: 4096\npurgeAllow: [127.0.0.1]\n');
    expect(loadConfigWithOrigins({ ...base, WIKIEDGE_CONFIG: file, WIKIEDGE_MAX_URL_BYTES: '4096', WIKIEDGE_PURGE_ALLOW: '127.0.0.1' }).warnings).toEqual([]);
  });
});
