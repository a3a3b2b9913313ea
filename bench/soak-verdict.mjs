// The soak's pass/fail rules (bench/soak.mjs), kept pure so test/unit/soak-verdict.test.ts can
// check them on made-up samples. Types: soak-verdict.d.mts.

/** What each request kind of bench/soak.lua must get; any other status is an error. */
export const EXPECTED_STATUSES = {
  hit: [200],
  miss: [200],
  session: [200],
  post: [200],
  logout: [200],
  page: [200],
  apierror: [200],
  malformed: [400],
  toolong: [414],
  purge: [200],
};

/** The first 20 % of the run, at least 60 s, but never more than half of it (short debug runs). */
export function warmupSeconds(runSeconds) {
  return Math.min(Math.max(60, 0.2 * runSeconds), 0.5 * runSeconds);
}

/** Per kind: answers by status, and the statuses that kind should never get. */
export function statusTable(got, expected = EXPECTED_STATUSES) {
  const kinds = {};
  for (const [key, n] of Object.entries(got)) {
    const [kind, status] = key.split(' ');
    const row = (kinds[kind] ??= { total: 0, byStatus: {}, unexpected: 0 });
    row.total += n;
    row.byStatus[status] = (row.byStatus[status] ?? 0) + n;
    if (!expected[kind]?.includes(Number(status))) row.unexpected += n;
  }
  return kinds;
}

/**
 * The verdict over the samples taken while the load ran (each `{ t, rssKB, fds }`, t in seconds
 * from the start of the load):
 * - RSS flat: after the warm-up, max ÷ min ≤ 1 + rssTolerance;
 * - no fd growth: the last sample's fd count ≤ the highest warm-up count + fdAllowance;
 * - no errors: no unexpected status, no wrk socket error or timeout, no gateway error log line,
 *   and every kind answered at least once (a load that sent nothing proves nothing).
 */
export function soakVerdict({
  samples,
  runSeconds,
  got,
  socketErrors = {},
  gatewayErrorLines = 0,
  expected = EXPECTED_STATUSES,
  rssTolerance = 0.1,
  fdAllowance = 4,
}) {
  const warmup = warmupSeconds(runSeconds);
  const warm = samples.filter((s) => s.t < warmup);
  const steady = samples.filter((s) => s.t >= warmup);
  const checks = [];
  const check = (name, pass, detail) => checks.push({ name, pass, detail });

  const rss = steady.map((s) => s.rssKB);
  const rssMinKB = rss.length ? Math.min(...rss) : NaN;
  const rssMaxKB = rss.length ? Math.max(...rss) : NaN;
  const rssRatio = rssMaxKB / rssMinKB;
  check(
    'RSS flat after warm-up',
    steady.length >= 2 && rssRatio <= 1 + rssTolerance,
    steady.length >= 2
      ? `${mb(rssMinKB)}–${mb(rssMaxKB)} MB over ${steady.length} samples (max/min ${rssRatio.toFixed(3)}, limit ${(1 + rssTolerance).toFixed(2)})`
      : `only ${steady.length} sample(s) after a ${warmup} s warm-up`,
  );

  const fdWarm = warm.length ? Math.max(...warm.map((s) => s.fds)) : NaN;
  const fdEnd = steady.at(-1)?.fds ?? NaN;
  check(
    'no fd growth',
    fdEnd <= fdWarm + fdAllowance,
    `end ${fdEnd}, warm-up max ${fdWarm} (+${fdAllowance} allowed)`,
  );

  const table = statusTable(got, expected);
  const unexpected = Object.values(table).reduce((n, r) => n + r.unexpected, 0);
  const silent = Object.keys(expected).filter((k) => !table[k]?.total);
  const sockets = Object.values(socketErrors).reduce((n, v) => n + v, 0);
  const errors = unexpected + sockets + gatewayErrorLines;
  check(
    'no errors',
    errors === 0 && silent.length === 0,
    `${unexpected} unexpected statuses, ${sockets} socket errors/timeouts, ${gatewayErrorLines} gateway error log lines` +
      (silent.length ? `; no answers for: ${silent.join(', ')}` : ''),
  );

  return {
    pass: checks.every((c) => c.pass),
    warmupSeconds: warmup,
    rssMinKB,
    rssMaxKB,
    fdWarm,
    fdEnd,
    errors,
    table,
    checks,
  };
}

const mb = (kb) => (kb / 1024).toFixed(1);
