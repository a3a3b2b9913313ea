/**
 * The layering of src/ (docs/ARCHITECTURE.md), enforced by `npm test`:
 * no circle, and no import from a layer to a higher one. A module may import its own layer and
 * any lower one. Listed lowest first; every file of src/ must be in exactly one layer.
 */
const LAYERS = [
  {
    name: 'outcomes',
    doc: 'leaf words and pure parsers: closed unions, errors, PHP input, addresses, targets',
    path: '^src/(outcomes|errors|address-list|target|request-id)\\.ts$|^src/php/',
  },
  {
    name: 'decisions',
    doc: 'pure decisions over headers and bodies: configuration, identity, forwarding, cookies, debuginfo, cache policy, entry formats, content codings',
    path: '^src/(config|identity|forwarding|set-cookie|redaction)\\.ts$|^src/config/|^src/debuginfo/|^src/compression/(accept-encoding|codings)\\.ts$|^src/invalidation/(titles|dependencies|purge-url|changes|session-users)\\.ts$|^src/api/(request|policy|requester-address)\\.ts$|^src/cache/(entry|freshness|compact|slab-arena|entry-table|entry-codec|guards|hand-over)\\.ts$',
  },
  {
    name: 'parts',
    doc: 'stateful parts with I/O at their edge: stores, Redis, metrics, logging, the upstream client and its probe, limits',
    path: '^src/(metrics|module-labels|build-info|request-metrics|logging|access-log|upstream|upstream-probe|module-names|body)\\.ts$|^src/cache/(store|tier|coalescer|purge|redis-tier|invalidation-log)\\.ts$|^src/cache/redis/|^src/limits/(client-address|client-budget|refusal-delay|upstream-gate)\\.ts$|^src/invalidation/(follower|signals)\\.ts$|^src/compression/(metrics|representations)\\.ts$',
  },
  {
    name: 'gateway',
    doc: 'the composition of the parts, handed to every step',
    path: '^src/gateway\\.ts$',
  },
  {
    name: 'steps',
    doc: 'the request path: api.php steps, the streamed path, session lifecycle, admission, the request record',
    path: '^src/api/(?!(request|policy|requester-address)\\.ts$)|^src/(passthrough|session-lifecycle|request-record|error-reply)\\.ts$|^src/limits/admission\\.ts$',
  },
  {
    name: 'apps',
    doc: 'listeners and processes: the public and admin apps, build, listen, cluster, the command line, main',
    path: '^src/(public-app|admin|app|listen|main|cli|cluster)\\.ts$|^src/cluster/',
  },
];


const upward = LAYERS.flatMap((layer, i) =>
  LAYERS.slice(i + 1).map((higher) => ({
    name: `${layer.name}-not-to-${higher.name}`,
    comment: `${layer.name} (${layer.doc}) must not import ${higher.name}: dependencies point down (docs/ARCHITECTURE.md)`,
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
      comment: 'Every source file belongs to one layer of .dependency-cruiser.cjs (docs/ARCHITECTURE.md).',
      severity: 'error',
      from: { path: '^src/', pathNot: LAYERS.map((l) => `(${l.path})`).join('|') },
      to: {},
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
