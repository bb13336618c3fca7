/**
 * Keeps the server's memory near its idle figure under a stream of calls.
 *
 * What grows under load is not live data (the JS heap is ≈ 8 MB after a full collection at any
 * point) but garbage that survives young collections: Bun keeps each request's JS objects (the
 * Request, its AbortSignal, the call's closures, promises and dispatch timer) reachable until the
 * request is finalized, so they are promoted to the old generation and only a full collection
 * frees them. JSC runs that full collection late (its old-generation limit is ≈ 30 MB at this heap
 * size), and freed blocks go back to the allocator only later still: RSS rose from ≈ 51 MB idle to
 * ≈ 100 MB after a few thousand calls and stayed near 70 MB when the load ended.
 *
 * So: while requests arrive, a full collection whenever the heap has grown by half (and by
 * GROWTH_FLOOR_BYTES) since the last one, checked every CHECK_MS; once requests stop, one last
 * collection so the allocator can return the pages. Cost: a `heapSize()` read per tick (not per
 * request), and under load at most two full collections a second.
 *
 * A collection alone leaves RSS ≈ 15 MB above its idle figure after a burst of calls: the freed
 * pages stay with the allocators, and the code compiled for the burst (and for start-up: plugin
 * discovery, Ajv's schema checks) stays in memory. So once per quiet spell, after
 * MEMORY_RELEASE_IDLE_MS without a request (start-up counts as activity), `Bun.shrink()`: JSC
 * drops compiled code, collects, and returns free memory to the system. Measured with
 * `bun test/bench/server.ts --memory`: anonymous memory back near its idle figure (31 → 18 MB
 * after 100,000 calls; 17.7 idle). The price is paid once, by the first call after the spell:
 * ≈ 4 ms from the start-up bundle (≈ 9 ms from source) instead of ≈ 1.5 ms while its code is
 * compiled again — invisible next to the seconds of quiet before it.
 *
 * A spell of HEAVY_SPELL_REQUESTS requests or more (a script or a load, not a person's agent,
 * which pauses for seconds between calls) is also released as soon as it ends instead of only
 * collected: after 100,000 calls RSS is then ≈ 4–5 MB above idle 2 s later, not ≈ 9 MB for the
 * whole quiet spell. The first call after it pays the recompilation once, as after any release.
 */
import { heapSize } from 'bun:jsc';
import { MEMORY_RELEASE_IDLE_MS } from '../limits.ts';

/** How often activity and heap growth are looked at. */
export const MEMORY_CHECK_MS = 250;
/** Collect when the heap has grown by this factor since the last full collection … */
const GROWTH_FACTOR = 1.5;
/** … and by at least this much (a small heap is not collected over a few KB). */
const GROWTH_FLOOR_BYTES = 4 * 1024 * 1024;
/**
 * Under load, at most one forced collection per this interval. A collection costs ≈ 20 ms of CPU
 * (`Bun.gc(true)` sweeps the whole heap at once): over 100,000 calls 16–31 collections, 3–5 µs of
 * CPU per call. Collecting less (2×, 8 MB, 1 s: 11–13 collections, 2 µs per call) was measured and
 * not kept: it raised the peak RSS under load by 0–6 MB (3–11 MB under the mixed load) for a
 * saving the call's p50 cannot show (BENCHMARKS.md, "the memory keeper's collections under load").
 */
const MIN_INTERVAL_MS = 500;
/** A spell of use with this many requests is released when it ends, without waiting for quiet. */
export const HEAVY_SPELL_REQUESTS = 1000;

export interface MemoryKeeper {
  /** One request arrived (called on every HTTP request: a counter increment). */
  touch(): void;
  stop(): void;
  /** Full collections it ran (health / tests). */
  readonly collections: number;
  /** Times it gave memory back after a quiet spell (tests). */
  readonly releases: number;
  /** Process CPU (ms) its full collections took, releases not included (the bench's figure). */
  readonly collectMs: number;
}

/** `Bun.shrink` is typed deprecated; guarded so a Bun without it only skips the release. */
function releaseMemory(): void {
  const shrink = (Bun as { shrink?: () => void }).shrink;
  if (typeof shrink === 'function') shrink();
  else Bun.gc(true);
}

export function startMemoryKeeper(checkMs = MEMORY_CHECK_MS, releaseIdleMs = MEMORY_RELEASE_IDLE_MS): MemoryKeeper {
  let requests = 0;
  let seen = 0;
  let wasActive = false;
  let collections = 0;
  let releases = 0;
  let collectMs = 0;
  let afterLast = heapSize();
  let lastAt = 0;
  // Start-up is the first spell of use: its code and garbage are released like a burst's.
  let quietSince: number | null = performance.now();
  const collect = () => {
    const cpu0 = process.cpuUsage();
    Bun.gc(true);
    const cpu = process.cpuUsage(cpu0);
    collectMs += (cpu.user + cpu.system) / 1000;
    collections++;
    afterLast = heapSize();
    lastAt = performance.now();
  };
  const release = () => {
    releaseMemory();
    releases++;
    afterLast = heapSize();
  };
  /** Requests counted before the current spell of use began. */
  let spellStart = 0;
  const timer = setInterval(() => {
    const active = requests !== seen;
    if (active && !wasActive) spellStart = seen;
    seen = requests;
    const now = performance.now();
    if (active) {
      quietSince = null;
      const size = heapSize();
      if (size > afterLast * GROWTH_FACTOR && size - afterLast > GROWTH_FLOOR_BYTES && now - lastAt >= MIN_INTERVAL_MS) collect();
    } else {
      if (wasActive) {
        // A heavy spell is released now, and again once the quiet spell has passed (what the
        // allocators free later, and what the process allocated meanwhile, goes back then).
        if (requests - spellStart >= HEAVY_SPELL_REQUESTS) release();
        else collect();
        quietSince = now;
      }
      if (quietSince !== null && now - quietSince >= releaseIdleMs) {
        // Once per quiet spell: the next release waits for requests and a new spell.
        quietSince = null;
        release();
      }
    }
    wasActive = active;
  }, checkMs);
  timer.unref();
  return {
    touch() {
      requests++;
    },
    stop() {
      clearInterval(timer);
    },
    get collections() {
      return collections;
    },
    get releases() {
      return releases;
    },
    get collectMs() {
      return collectMs;
    },
  };
}
