// Types of soak-verdict.mjs, for the unit test (tsc does not read .mjs here: no allowJs).
export interface SoakSample {
  /** Seconds since the load started. */
  t: number;
  rssKB: number;
  fds: number;
  /** Of `fds`, the harness's own connections to the admin listener (not counted). */
  admin?: number;
  [more: string]: unknown;
}

export interface KindRow {
  total: number;
  byStatus: Record<string, number>;
  unexpected: number;
}

export interface SoakCheck {
  name: string;
  pass: boolean;
  detail: string;
}

export interface SoakVerdict {
  pass: boolean;
  warmupSeconds: number;
  rssMinKB: number;
  rssMaxKB: number;
  rssTrend: number;
  fdWarm: number;
  fdEnd: number;
  errors: number;
  table: Record<string, KindRow>;
  checks: SoakCheck[];
}

export const EXPECTED_STATUSES: Record<string, number[]>;
export function warmupSeconds(runSeconds: number): number;
export function statusTable(got: Record<string, number>, expected?: Record<string, number[]>): Record<string, KindRow>;
export function soakVerdict(input: {
  samples: SoakSample[];
  runSeconds: number;
  /** Answers counted by wrk, keyed "kind status". */
  got: Record<string, number>;
  socketErrors?: Record<string, number>;
  gatewayErrorLines?: number;
  /** The gateway's fds with no load, before it and once idle sockets have closed after it. */
  idleBefore?: { fds: number; admin?: number };
  idleAfter?: { fds: number; admin?: number };
  expected?: Record<string, number[]>;
  rssTolerance?: number;
  fdAllowance?: number;
}): SoakVerdict;
