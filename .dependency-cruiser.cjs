/**
 * The layering of src/ (docs/ARCHITECTURE.md), enforced by `npm test`: each folder of src/ is one
 * layer, listed lowest first. A module imports its own folder and lower ones, never a higher one,
 * and no circle. Only the entry point (src/main.ts) sits at the root. A new folder needs its place
 * in this list, or the `in-a-layer` rule fails.
 */
const LAYERS = [
  ['words', 'leaf words: closed unions of outcomes, errors, purge messages, addresses, request targets'],
  ['config', 'the configuration table, validated once and frozen'],
  ['http', 'pure HTTP helpers: forwarded headers, content codings, redaction, bodies'],
  ['mediawiki', 'what MediaWiki does, pure: PHP input, identity, Set-Cookie, titles, debuginfo, the module table'],
  ['observe', 'metrics, logging, the access log'],
  ['policy', 'the pure cache policy: key, verdict, freshness, dependencies, changes'],
  ['cache', 'storage only: the local tier, the Redis tier, the storage seam'],
  ['upstream', 'the client of the wiki and its probe'],
  ['limits', 'budgets and gates'],
  ['compression', 'representations made on demand and their metrics'],
  ['invalidation', 'change signals: the recentchanges follower and signal routing'],
  ['gateway', 'the composition of the parts'],
  ['steps', 'the request path: recv, hash, lookup, fetch, store, deliver'],
  ['apps', 'listeners: the public and admin apps, the command line'],
  ['cluster', 'processes: the node:cluster primary and its workers'],
].map(([name, doc]) => ({ name, doc, path: `^src/${name}/` }));

const upward = LAYERS.flatMap((layer, i) =>
  LAYERS.slice(i + 1).map((higher) => ({
    name: `${layer.name}-not-to-${higher.name}`,
    comment: `${layer.name}/ (${layer.doc}) must not import ${higher.name}/: dependencies point down (docs/ARCHITECTURE.md)`,
    severity: 'error',
    from: { path: layer.path },
    to: { path: higher.path },
  })),
);

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A circle ties modules into one unit that cannot be read or tested alone.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'in-a-layer',
      comment: 'Every source file sits in a layer folder of .dependency-cruiser.cjs, or is an entry point: src/main.ts, src/healthcheck.ts (docs/ARCHITECTURE.md).',
      severity: 'error',
      from: { path: '^src/', pathNot: [...LAYERS.map((l) => l.path), '^src/(main|healthcheck)\\.ts$'].join('|') },
      to: {},
    },
    {
      name: 'nothing-imports-main',
      comment: 'src/main.ts and src/healthcheck.ts are entry points, the tops of the graph.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/(main|healthcheck)\\.ts$' },
    },
    ...upward,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
