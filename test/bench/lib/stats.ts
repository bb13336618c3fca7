/** Small statistics and formatting helpers for the benchmarks (no assertions, figures only). */

export interface Summary {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/** Nearest-rank percentile of an ascending array (p in 0..100). */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function summarize(samples: number[]): Summary {
  const s = [...samples].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / (s.length || 1);
  return { n: s.length, p50: percentile(s, 50), p90: percentile(s, 90), p99: percentile(s, 99), mean, min: s[0] ?? NaN, max: s[s.length - 1] ?? NaN };
}

export function median(xs: number[]): number {
  return percentile([...xs].sort((a, b) => a - b), 50);
}

/** Median of each field over several runs (runs vary on a shared machine; medians are stable). */
export function medianSummary(runs: Summary[]): Summary {
  const pick = (k: keyof Summary) => median(runs.map((r) => r[k]));
  return { n: runs.reduce((a, r) => a + r.n, 0), p50: pick('p50'), p90: pick('p90'), p99: pick('p99'), mean: pick('mean'), min: Math.min(...runs.map((r) => r.min)), max: Math.max(...runs.map((r) => r.max)) };
}

export const ms = (x: number) => (Number.isFinite(x) ? (x < 10 ? x.toFixed(3) : x < 100 ? x.toFixed(2) : x.toFixed(1)) : 'n/a');
export const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
export const round = (x: number, digits = 3) => (Number.isFinite(x) ? Number(x.toFixed(digits)) : null);

/** Time `n` sequential calls of `fn` (after `warmup` untimed ones); ms per call. `pauseMs` waits untimed between calls. */
export async function timeSequential(n: number, warmup: number, fn: (i: number) => Promise<unknown>, pauseMs = 0): Promise<number[]> {
  const pause = () => (pauseMs > 0 ? new Promise((r) => setTimeout(r, pauseMs)) : undefined);
  for (let i = 0; i < warmup; i++) {
    await fn(-1 - i);
    await pause();
  }
  const out: number[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn(i);
    out[i] = performance.now() - t0;
    await pause();
  }
  return out;
}

/** Run `total` calls with `inFlight` workers; calls/s over the wall time and the failures seen. */
export async function timeConcurrent(total: number, inFlight: number, fn: (i: number) => Promise<boolean>): Promise<{ callsPerSec: number; ok: number; failed: number; wallMs: number }> {
  let next = 0;
  let ok = 0;
  let failed = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (next < total) {
      const i = next++;
      try {
        if (await fn(i)) ok++;
        else failed++;
      } catch {
        failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const wallMs = performance.now() - t0;
  return { callsPerSec: (ok / wallMs) * 1000, ok, failed, wallMs };
}

/** A plain text table with aligned columns. */
export function table(header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}
