// A cluster primary validates the configuration's sources and hands the very same sources to its
// workers over IPC (structured clone): validated again there, they give the same configuration,
// without the worker reading any file, and the environment still wins over the file.
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configFromSources, readConfigSources } from '../../src/config/config.js';
import { scratchDir } from '../support/scratch.js';

describe('configuration sources', () => {
  it('give the same configuration after a structured clone, with the files gone', () => {
    const dir = scratchDir('wikiedge-sources-');
    const file = path.join(dir, 'wikiedge.yaml');
    const token = path.join(dir, 'token');
    writeFileSync(file, 'upstream: http://wiki:80\nmaxUrlBytes: 4096\nmodules: {"parse": {"pass": true}}\ntrustedProxies: [10.0.0.0/8]\nport: 9000\n');
    writeFileSync(token, 'an-admin-token-0123456789\n');
    const sources = readConfigSources({ WIKIEDGE_CONFIG: file, WIKIEDGE_ADMIN_TOKEN_FILE: token, WIKIEDGE_PORT: '9001', HOME: '/root' });
    const here = configFromSources(sources);
    rmSync(dir, { recursive: true });
    const there = configFromSources(structuredClone(sources));
    // Every key but the identity secret, drawn at random by each load (the primary draws one for all, worker-config.ts).
    expect({ ...there.config, identitySecret: null }).toEqual({ ...here.config, identitySecret: null });
    expect(there.origins).toEqual(here.origins);
    expect(there.config).toMatchObject({ maxUrlBytes: 4096, port: 9001, adminToken: 'an-admin-token-0123456789', modules: { parse: { pass: true } } });
    expect(there.origins).toMatchObject({ maxUrlBytes: 'config-file', port: 'environment', adminToken: 'secret-file' });
  });

  it('hold only the WIKIEDGE_* environment', () => {
    const sources = readConfigSources({ WIKIEDGE_UPSTREAM: 'http://wiki:80', HOME: '/root', PATH: '/bin' });
    expect(sources.env).toEqual({ WIKIEDGE_UPSTREAM: 'http://wiki:80' });
  });
});
