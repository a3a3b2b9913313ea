// Types of soak-verdict.mjs, for the unit test (tsc does not read .mjs here: no allowJs).
export interface SoakSample {
  /** Seconds since the load started. */
  t: number;
  rssKB: number;
  fds: number;
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
  expected?: Record<string, number[]>;
  rssTolerance?: number;
  fdAllowance?: number;
}): SoakVerdict;
