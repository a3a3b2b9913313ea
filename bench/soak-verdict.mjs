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

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
};
/** Open fds of a sample, less the harness's own connections to the admin listener. */
const gatewayFds = (s) => s.fds - (s.admin ?? 0);

/**
 * The verdict over the samples taken while the load ran (each `{ t, rssKB, fds, admin? }`, t in
 * seconds from the start of the load) and the idle samples before and after it:
 * - RSS flat: after the warm-up, max ÷ min ≤ 1 + rssTolerance (the criterion, as is);
 * - no fd growth under load: the level at the end (median of the last 6 samples) ≤ the level at
 *   the end of the warm-up (median of its second half, past the cold-cache burst) + fdAllowance;
 * - fds back to idle: once the load has stopped and idle pool sockets have closed, no more fds
 *   than before the load (client and pool sockets are all gone by then);
 * - no errors: no unexpected status, no wrk socket error or timeout, no gateway error log line,
 *   and every kind answered at least once (a load that sent nothing proves nothing).
 * `rssTrend` (informative): the highest RSS of the steady window's second half ÷ its first half;
 * a leak pushes it above 1, a bounded sawtooth keeps it near 1.
 */
export function soakVerdict({
  samples,
  runSeconds,
  got,
  socketErrors = {},
  gatewayErrorLines = 0,
  idleBefore,
  idleAfter,
  expected = EXPECTED_STATUSES,
  rssTolerance = 0.1,
  fdAllowance = 4,
}) {
  const warmup = warmupSeconds(runSeconds);
  const steady = samples.filter((s) => s.t >= warmup);
  const checks = [];
  const check = (name, pass, detail) => checks.push({ name, pass, detail });

  const rss = steady.map((s) => s.rssKB);
  const rssMinKB = rss.length ? Math.min(...rss) : NaN;
  const rssMaxKB = rss.length ? Math.max(...rss) : NaN;
  const rssRatio = rssMaxKB / rssMinKB;
  const half = Math.floor(rss.length / 2);
  const rssTrend = Math.max(...rss.slice(half)) / Math.max(...rss.slice(0, half));
  check(
    'RSS flat after warm-up',
    steady.length >= 2 && rssRatio <= 1 + rssTolerance,
    steady.length >= 2
      ? `${mb(rssMinKB)}–${mb(rssMaxKB)} MB over ${steady.length} samples (max/min ${rssRatio.toFixed(3)}, limit ${(1 + rssTolerance).toFixed(2)}; peak 2nd half ÷ 1st half ${rssTrend.toFixed(3)})`
      : `only ${steady.length} sample(s) after a ${warmup} s warm-up`,
  );

  const fdWarm = median(samples.filter((s) => s.t >= warmup / 2 && s.t < warmup).map(gatewayFds));
  const fdEnd = median(steady.slice(-6).map(gatewayFds));
  check(
    'no fd growth under load',
    fdEnd <= fdWarm + fdAllowance,
    `end ${fdEnd}, end of warm-up ${fdWarm} (+${fdAllowance} allowed); steady range ${Math.min(...steady.map(gatewayFds))}–${Math.max(...steady.map(gatewayFds))}`,
  );
  const idle = (s) => (s ? gatewayFds(s) : NaN);
  check('fds back to idle after the load', idle(idleAfter) <= idle(idleBefore), `${idle(idleBefore)} before the load, ${idle(idleAfter)} after it`);

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
    rssTrend,
    fdWarm,
    fdEnd,
    errors,
    table,
    checks,
  };
}

const mb = (kb) => (kb / 1024).toFixed(1);
