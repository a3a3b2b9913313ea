// The compose file that scripts/verify-compose.sh starts: compose.yaml with
//   1. relative host paths (./deploy/..., ./config/..., build: .) made absolute, so that the
//      copy can live in the check's temp folder (podman-compose takes the project folder, and
//      its .env, from the first file's folder: a developer's own .env must not steer the check);
//   2. the gateway's WIKIEDGE_* variables that the gateway being tested does not know removed
//      (it refuses to start on an unknown WIKIEDGE_* variable). compose.yaml is written for
//      settings that src/ is still gaining; each one left out is reported.
// and, as JSON on stdout, what it did and the networks' ipam (podman-compose 1.0.3 ignores ipam,
// so the check creates the networks itself, as Docker Compose would).
//
// Usage: node scripts/compose-check-file.mjs COMPOSE_YAML REPO_ROOT KNOWN_KEYS_FILE OUT_YAML
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';

const [composePath, root, knownKeysPath, outPath] = process.argv.slice(2);
if (!composePath || !root || !knownKeysPath || !outPath) {
  console.error('usage: compose-check-file.mjs COMPOSE_YAML REPO_ROOT KNOWN_KEYS_FILE OUT_YAML');
  process.exit(2);
}
const doc = parse(readFileSync(composePath, 'utf8'));
const known = new Set(
  readFileSync(knownKeysPath, 'utf8')
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean),
);
if (known.size < 10) {
  console.error(`only ${known.size} configuration keys in ${knownKeysPath}: not a list of the gateway's keys`);
  process.exit(2);
}
const absolute = (p) => (p === '.' || p.startsWith('./') || p.startsWith('../') ? path.resolve(root, p) : p);

const gated = [];
const kept = [];
for (const [name, service] of Object.entries(doc.services ?? {})) {
  if (Array.isArray(service.volumes)) {
    service.volumes = service.volumes.map((v) => {
      if (typeof v !== 'string') return v;
      const i = v.indexOf(':');
      return i > 0 ? absolute(v.slice(0, i)) + v.slice(i) : v;
    });
  }
  if (typeof service.build === 'string') service.build = absolute(service.build);
  else if (service.build?.context) service.build.context = absolute(service.build.context);
  if (name !== 'wikiedge') continue;
  const env = service.environment ?? {};
  if (Array.isArray(env)) throw new Error('compose.yaml: the wikiedge environment is expected as a mapping');
  for (const key of Object.keys(env)) {
    if (!key.startsWith('WIKIEDGE_')) continue;
    if (known.has(key)) kept.push(key);
    else {
      gated.push({ key, value: env[key] });
      delete env[key];
    }
  }
}
for (const secret of Object.values(doc.secrets ?? {})) {
  if (typeof secret?.file === 'string' && !secret.file.includes('$')) secret.file = absolute(secret.file);
}

const networks = Object.entries(doc.networks ?? {}).map(([name, n]) => {
  const config = n?.ipam?.config?.[0] ?? {};
  return { name, subnet: config.subnet ?? '', ipRange: config.ip_range ?? '', internal: Boolean(n?.internal) };
});
// Every string value double-quoted: podman-compose reads the copy with PyYAML (YAML 1.1), where a
// plain no or on would become a boolean.
writeFileSync(outPath, stringify(doc, { defaultStringType: 'QUOTE_DOUBLE', defaultKeyType: 'PLAIN' }));
console.log(JSON.stringify({ gated, kept, networks }));
