/**
 * browser_performance_trace: 'start' holds the tab's debugger session and installs a small
 * collector (PerformanceObserver for largest-contentful-paint, layout-shift and longtask, buffered)
 * in an isolated world of ours, in the current document and in every document the tab loads until
 * 'stop'; 'stop' reads it back from the page now in the tab and returns a summary, not a raw trace:
 * navigation timings (TTFB, DOMContentLoaded, load), LCP, CLS (largest session window, as Core Web
 * Vitals define it), long tasks (count, total blocking time, the longest ones).
 *
 * The figures are the browser's own Performance Timeline entries for the page in the tab at stop,
 * from its load; when the tab navigated during the trace, earlier pages are only counted.
 */
import { ToolError } from '../shared/tool-error.ts';
import { debuggerEvents } from './cdp-events.ts';
import { holdDebugger, type Held } from './held-debugger.ts';
import type { Handlers } from './types.ts';

const WORLD = 'opentabs-perf';

/** Runs in our isolated world as the document starts (or at once in the current one). */
const COLLECTOR = `(() => {
  if (globalThis.__opentabsPerf) return;
  const st = (globalThis.__opentabsPerf = { installedAt: performance.now(), lcp: null, shifts: [], longTasks: [] });
  const watch = (type, fn) => {
    try { new PerformanceObserver((list) => list.getEntries().forEach(fn)).observe({ type, buffered: true }); } catch {}
  };
  watch('largest-contentful-paint', (e) => {
    const el = e.element;
    st.lcp = { ms: e.startTime, size: e.size, element: el ? el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') : null, url: e.url || null };
  });
  watch('layout-shift', (e) => { if (!e.hadRecentInput) st.shifts.push({ t: e.startTime, v: e.value }); });
  watch('longtask', (e) => {
    const a = e.attribution && e.attribution[0];
    st.longTasks.push({ startMs: e.startTime, durationMs: e.duration, ...(a && a.containerType && a.containerType !== 'window' ? { container: a.containerType + (a.containerSrc ? ' ' + a.containerSrc : '') } : {}) });
  });
})()`;

/** Read in the page at stop: the collector's entries and the navigation timing. */
const READ = `(async () => {
  // A page the collector missed (e.g. loaded before start in a world we lost): its buffered entries.
  if (!globalThis.__opentabsPerf) { ${COLLECTOR}; await new Promise((r) => setTimeout(r, 100)); }
  const st = globalThis.__opentabsPerf;
  const nav = performance.getEntriesByType('navigation')[0];
  return {
    url: location.href,
    nowMs: performance.now(),
    collector: st ? { installedAt: st.installedAt, lcp: st.lcp, shifts: st.shifts, longTasks: st.longTasks } : null,
    nav: nav ? { type: nav.type, responseStart: nav.responseStart, domContentLoaded: nav.domContentLoadedEventEnd, load: nav.loadEventEnd, transferSize: nav.transferSize } : null,
  };
})()`;

interface Read {
  url: string;
  nowMs: number;
  collector: { installedAt: number; lcp: { ms: number; size: number; element: string | null; url: string | null } | null; shifts: { t: number; v: number }[]; longTasks: { startMs: number; durationMs: number; container?: string }[] } | null;
  nav: { type: string; responseStart: number; domContentLoaded: number; load: number; transferSize: number } | null;
}

interface Trace {
  held: Held;
  scriptId: string;
  startedAt: number;
  navigations: number;
  offEvents: () => void;
}
const traces = new Map<number, Trace>();

function end(tabId: number): void {
  const t = traces.get(tabId);
  if (!t) return;
  traces.delete(tabId);
  t.offEvents();
  t.held.release();
}

const r1 = (n: number) => Math.round(n * 10) / 10;

/** CLS as Core Web Vitals define it: the largest burst of shifts (gaps < 1 s, at most 5 s long). */
export function clsOf(shifts: { t: number; v: number }[]): number {
  let best = 0;
  let sum = 0;
  let first = -Infinity;
  let prev = -Infinity;
  for (const s of [...shifts].sort((a, b) => a.t - b.t)) {
    if (s.t - prev > 1000 || s.t - first > 5000) {
      sum = 0;
      first = s.t;
    }
    sum += s.v;
    prev = s.t;
    best = Math.max(best, sum);
  }
  return Math.round(best * 10000) / 10000;
}

function summarize(r: Read, t: Trace) {
  const c = r.collector;
  const tasks = c?.longTasks ?? [];
  const blocking = tasks.reduce((s, x) => s + Math.max(0, x.durationMs - 50), 0);
  const nav = r.nav;
  const ms = (x: number | undefined) => (x && x > 0 ? r1(x) : null);
  return {
    url: r.url,
    traceMs: Date.now() - t.startedAt,
    navigations: t.navigations,
    navigation: nav ? { type: nav.type, ttfbMs: ms(nav.responseStart), domContentLoadedMs: ms(nav.domContentLoaded), loadMs: ms(nav.load), transferBytes: nav.transferSize } : null,
    lcp: c?.lcp ? { ms: r1(c.lcp.ms), element: c.lcp.element, ...(c.lcp.url ? { url: c.lcp.url } : {}) } : null,
    cls: clsOf(c?.shifts ?? []),
    layoutShifts: c?.shifts.length ?? 0,
    longTasks: {
      count: tasks.length,
      totalBlockingMs: r1(blocking),
      longest: [...tasks].sort((a, b) => b.durationMs - a.durationMs).slice(0, 5).map((x) => ({ startMs: r1(x.startMs), durationMs: r1(x.durationMs), ...(x.container ? { container: x.container } : {}) })),
    },
    note: 'Timings in ms from the start of the page now in the tab (its load included); long tasks and shifts are those of this page until stop.',
  };
}

async function worldContext(held: Held): Promise<number> {
  const tree = await held.send<{ frameTree: { frame: { id: string } } }>('Page.getFrameTree');
  const w = await held.send<{ executionContextId: number }>('Page.createIsolatedWorld', { frameId: tree.frameTree.frame.id, worldName: WORLD, grantUniveralAccess: false });
  return w.executionContextId;
}

async function evaluate<T>(held: Held, expression: string): Promise<T> {
  const contextId = await worldContext(held);
  const r = await held.send<{ result: { value?: T }; exceptionDetails?: { text: string } }>('Runtime.evaluate', { expression, contextId, returnByValue: true, awaitPromise: true });
  if (r.exceptionDetails) throw new ToolError(`Reading the page's performance entries failed: ${r.exceptionDetails.text}`, { code: 'internal', category: 'internal' });
  return r.result.value as T;
}

export const perfTraceTools = {
  async browser_performance_trace(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const tabId = tab.id!;
    if (input.action === 'start') {
      const restarted = traces.has(tabId);
      if (restarted) {
        const old = traces.get(tabId)!;
        await old.held.send('Page.removeScriptToEvaluateOnNewDocument', { identifier: old.scriptId }).catch(() => {});
        end(tabId);
      }
      const held = await holdDebugger(tabId, () => {
        const t = traces.get(tabId);
        if (t?.held === held) {
          traces.delete(tabId);
          t.offEvents();
        }
      });
      try {
        await held.send('Page.enable');
        const { identifier } = await held.send<{ identifier: string }>('Page.addScriptToEvaluateOnNewDocument', { source: COLLECTOR, worldName: WORLD });
        const trace: Trace = { held, scriptId: identifier, startedAt: Date.now(), navigations: 0, offEvents: () => {} };
        trace.offEvents = debuggerEvents(tabId, (method, params) => {
          const frame = (params as { frame?: { parentId?: string } }).frame;
          if (method === 'Page.frameNavigated' && frame && !frame.parentId) trace.navigations++;
        });
        traces.set(tabId, trace);
        await evaluate(held, COLLECTOR);
        // Cancelled or timed out while a busy page held the steps above up: the caller was told
        // it failed, so no trace may keep the debugger attached behind its back.
        ctx.signal.throwIfAborted();
      } catch (err) {
        end(tabId);
        held.release();
        throw err;
      }
      return { value: { tabId, started: true, ...(restarted ? { restarted: true } : {}), note: "Reload or use the page, then call with action 'stop' for the summary." } };
    }
    const t = traces.get(tabId);
    if (!t) throw new ToolError(`No performance trace is running in tab ${tabId}; call with action 'start' first`, { code: 'invalid_arguments', category: 'validation' });
    try {
      // Let entries of the last moments reach the observers.
      await new Promise((r) => setTimeout(r, 100));
      const r = await evaluate<Read>(t.held, READ);
      return { value: summarize(r, t) };
    } finally {
      await t.held.send('Page.removeScriptToEvaluateOnNewDocument', { identifier: t.scriptId }).catch(() => {});
      end(tabId);
    }
  },
} satisfies Partial<Handlers>;
