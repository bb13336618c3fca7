/** What every bench script needs around its figures: the server's limits, cleanup, waiting. */

/**
 * The bench server's limits: the shipped ones except two that would refuse the bench's own load —
 * the MCP session rate (the bench opens thousands) and the per-plugin limit of calls in flight
 * (shipped 5; "8 in flight" needs more).
 */
export const BENCH_LIMITS = { mcpSessionRate: { max: 1_000_000, windowMs: 60_000 }, adminRate: { max: 1000, windowMs: 60_000 }, pluginMaxConcurrency: 64 };

/** Undo steps (temp dirs, Chromium, servers), run last-first by cleanup(), also on Ctrl-C. */
export const cleanups: (() => unknown)[] = [];

export async function cleanup(): Promise<void> {
  for (const fn of cleanups.reverse()) {
    try {
      await fn();
    } catch {}
  }
  cleanups.length = 0;
}

/** Polls `fn` every 50 ms until it gives a truthy value (returned), or throws after `timeoutMs`. */
export async function waitUntil<T>(fn: () => Promise<T | undefined | null | false>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch {}
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(50);
  }
}
