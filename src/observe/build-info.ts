/**
 * What this gateway is, for wikiedge_build_info: the package's version, the commit it was built
 * from, the Node.js it runs on. Read once, when the metrics are declared.
 *
 * The commit: SOURCE_COMMIT in the environment (what Docker Hub's automated builds and most CI
 * set; pass it to a container to say which commit its image holds), else what `npm run build`
 * wrote at the top of the compiled files (dist/build-info.json, from SOURCE_COMMIT or `git rev-parse
 * HEAD` at build time: package.json's postbuild), else `unknown` (tests run from src/, or a
 * build without git). Paths are from this file's place, dist/observe/ (src/observe/ in tests).
 */
import { readFileSync } from 'node:fs';

export interface BuildInfo {
  readonly version: string;
  readonly commit: string;
  readonly node_version: string;
}

export function buildInfo(env: NodeJS.ProcessEnv = process.env): BuildInfo {
  return {
    version: jsonField(new URL('../../package.json', import.meta.url), 'version') ?? 'unknown',
    commit: commitLabel(env['SOURCE_COMMIT']) ?? commitLabel(jsonField(new URL('../build-info.json', import.meta.url), 'commit')) ?? 'unknown',
    node_version: process.version,
  };
}

/** A commit id as a label: hex, at most 40 characters; anything else is not one. */
function commitLabel(value: string | undefined): string | undefined {
  const v = value?.trim().toLowerCase();
  return v && /^[0-9a-f]{7,40}$/.test(v) ? v : undefined;
}

function jsonField(file: URL, field: string): string | undefined {
  try {
    const value = (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>)[field];
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}
