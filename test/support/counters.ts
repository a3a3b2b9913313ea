// The cumulative series of a Prometheus exposition (counters, and histograms' buckets, counts and
// sums), and the check that a later scrape has every one of them at least as high: a series that
// goes down or vanishes is what Prometheus reads as a counter reset.

/** Every cumulative series of an exposition: `name{labels}` -> value. */
export function cumulativeSeries(exposition: string): Map<string, number> {
  const types = new Map<string, string>();
  const series = new Map<string, number>();
  for (const line of exposition.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/.exec(line);
    if (!sample) continue;
    const name = sample[1]!;
    const family = types.has(name) ? name : name.replace(/_(bucket|sum|count)$/, '');
    const kind = types.get(family);
    if (kind === 'counter' || kind === 'histogram') series.set(`${name}${sample[2] ?? ''}`, Number(sample[3]));
  }
  return series;
}

/** What went down or vanished from `before` to `after`, as readable lines (none: monotonic). */
export function decreases(before: Map<string, number>, after: Map<string, number>): string[] {
  const found: string[] = [];
  for (const [key, value] of before) {
    const now = after.get(key);
    if (now === undefined) found.push(`${key} vanished (was ${value})`);
    else if (now < value) found.push(`${key} went down: ${value} -> ${now}`);
  }
  return found;
}
