// Go's time.Duration text form, as metav1.Duration carries it in Kubernetes configuration files:
// parsed like time.ParseDuration ("30s", "1m0s", "1.5h", "300ms", "-2s", "0") and written like
// Duration.String() ("30s", "1m0s", "24h0m0s", "500ms", "0s"), so a file we write reads back the
// same in kube-proxy itself. Values are milliseconds; finer units are accepted and rounded.

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  'µs': 1e-3,
  'μs': 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const COMPONENT = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;

/** Milliseconds of a Go duration string, or an error message saying why it is not one. */
export function parseGoDuration(text: string): { ms: number } | { error: string } {
  const bad = { error: `"${text}" is not a duration (Go syntax, like 30s, 1m0s, 500ms, 1h30m)` };
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest.startsWith('-')) sign = -1;
    rest = rest.slice(1);
  }
  // As in Go, a bare "0" is the only number allowed without a unit.
  if (rest === '0') return { ms: 0 };
  if (rest === '') return bad;
  let total = 0;
  COMPONENT.lastIndex = 0;
  while (COMPONENT.lastIndex < rest.length) {
    const m = COMPONENT.exec(rest);
    if (!m) return bad;
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
  }
  return { ms: Math.round(sign * total) };
}

/** Duration.String() of a number of milliseconds. */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(Math.round(ms));
  // Under a second Go writes one unit with a fraction ("500ms", "1.5ms"); we only hold whole ms.
  if (rest < 1000) return `${sign}${rest}ms`;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = rest / 1000;
  // Go writes the seconds with the shortest exact fraction: 1.5s, 1.25s, 1.001s.
  const secondsText = `${Number(seconds.toFixed(3))}s`;
  if (hours > 0) return `${sign}${hours}h${minutes}m${secondsText}`;
  if (minutes > 0) return `${sign}${minutes}m${secondsText}`;
  return `${sign}${secondsText}`;
}
