/**
 * Unit-testing helpers for plugin authors: run a tool exactly as the page runtime would (input
 * and output validation, ctx, error mapping) without a browser.
 *
 *   const r = await runTool(plugin, 'list_items', {}, {
 *     page: { url: 'https://app.example.com/', meta: { 'csrf-token': 't' } },
 *     routes: { 'GET /api/items': () => ({ items: [] }) },
 *   });
 *   expect(r.outcome.ok).toBe(true);
 */
import type { LogLevel } from '../../server/protocol/methods.ts';
import type { PluginDefinition } from './define.ts';
import { executeTool, sendableResult, type ExecuteOutcome } from './execute.ts';

export interface FakePage {
  /** location.href of the page (relative fetch URLs resolve against it). Default https://example.com/. */
  url?: string;
  title?: string;
  /** `<meta name=… content=…>` tags (e.g. { 'csrf-token': 'abc' }). */
  meta?: Record<string, string>;
  /** document.cookie, e.g. "session=1; XSRF-TOKEN=abc". */
  cookie?: string;
  /** Extra globals the page defines (window.__APP__ …). */
  globals?: Record<string, unknown>;
  /** The page's localStorage and sessionStorage (getLocalStorage, getSessionStorage; a token the app keeps there). */
  localStorage?: Record<string, string>;
  sessionStorage?: Record<string, string>;
}

/** A Storage with the given items (what the handler writes stays in this call). */
function fakeStorage(items: Record<string, string> = {}): Storage {
  const map = new Map(Object.entries(items));
  return {
    get length() {
      return map.size;
    },
    key: (i: number) => [...map.keys()][i] ?? null,
    getItem: (k: string) => map.get(String(k)) ?? null,
    setItem: (k: string, val: string) => void map.set(String(k), String(val)),
    removeItem: (k: string) => void map.delete(String(k)),
    clear: () => map.clear(),
  };
}

/** A fake route answers a request: a Response, or any JSON-able value (sent as 200 JSON). */
export type FakeRoute = (req: Request) => Response | unknown | Promise<Response | unknown>;

export interface RunToolOptions {
  config?: Record<string, unknown>;
  signal?: AbortSignal;
  /** Stand-in page: document (title, meta, cookie, querySelector) and location, for this call only. */
  page?: FakePage;
  /**
   * Fake fetch for this call only: keys are "METHOD /path" or "/path" (any method, any host), or
   * with the origin, "METHOD https://api.example.com/path" (that host only, tried first); requests
   * that match no route get a 404, so a tool never reaches the network from a unit test.
   */
  routes?: Record<string, FakeRoute>;
  /** Every request the tool made, in order (filled when routes are given). */
  requests?: Request[];
  /**
   * Give up after this many ms without progress (default RUN_TOOL_TIMEOUT_MS, under bun test's
   * 5 s per test): a handler that never settles ends as a `timeout` outcome naming the tool, with
   * ctx.signal aborted, as a real call does after 30 s without progress. 0 waits forever.
   */
  timeoutMs?: number;
}

export const RUN_TOOL_TIMEOUT_MS = 4000;

function fakeDocument(page: FakePage) {
  const meta = page.meta ?? {};
  const metaEl = (name: string) => (Object.hasOwn(meta, name) ? { name, content: meta[name], getAttribute: (a: string) => (a === 'content' ? meta[name]! : a === 'name' ? name : null) } : null);
  const allMeta = () => Object.keys(meta).map((n) => metaEl(n)!);
  const nameOf = (sel: string) => /meta\[name=["']?([^"'\]]+)["']?\]/.exec(sel)?.[1];
  // `meta[name="x"]` finds that tag, `meta` every tag (getMetaContent reads them all); nothing else exists.
  const matches = (sel: string) => {
    const n = nameOf(sel);
    if (n) return [metaEl(n)].filter((e) => e !== null);
    return sel.trim() === 'meta' ? allMeta() : [];
  };
  return {
    title: page.title ?? '',
    readyState: 'complete',
    cookie: page.cookie ?? '',
    querySelector: (sel: string) => matches(sel)[0] ?? null,
    querySelectorAll: (sel: string) => matches(sel),
  };
}

/** Install page globals and a routed fetch; returns the function that restores the previous ones. */
function installFakes(options: RunToolOptions): () => void {
  const g = globalThis as Record<string, unknown>;
  const saved = new Map<string, PropertyDescriptor | undefined>();
  const set = (key: string, value: unknown) => {
    if (!saved.has(key)) saved.set(key, Object.getOwnPropertyDescriptor(g, key));
    Object.defineProperty(g, key, { value, configurable: true, writable: true, enumerable: true });
  };
  const base = options.page?.url ?? 'https://example.com/';
  if (options.page) {
    set('document', fakeDocument(options.page));
    set('location', new URL(base));
    set('localStorage', fakeStorage(options.page.localStorage));
    set('sessionStorage', fakeStorage(options.page.sessionStorage));
    for (const [k, val] of Object.entries(options.page.globals ?? {})) set(k, val);
  }
  if (options.routes) {
    const routes = options.routes;
    set('fetch', async (input: RequestInfo | URL, init?: RequestInit) => {
      const req = new Request(typeof input === 'string' || input instanceof URL ? new URL(String(input), base) : input, init);
      const recorded = req.clone();
      // Bun's Request drops `credentials` (always "include"): keep the one asked for (cookies or not), as a browser's does.
      const credentials = init?.credentials ?? (input instanceof Request ? undefined : 'same-origin');
      if (credentials !== undefined) Object.defineProperty(recorded, 'credentials', { value: credentials, configurable: true });
      options.requests?.push(recorded);
      const u = new URL(req.url);
      const path = u.pathname;
      // "GET https://api.example.com/me" (another host than the page's) before "GET /me" (any host).
      const full = `${u.origin}${path}`;
      const route = routes[`${req.method} ${full}`] ?? routes[full] ?? routes[`${req.method} ${path}`] ?? routes[path];
      if (!route) return Response.json({ error: `no fake route for ${req.method} ${u.origin === new URL(base).origin ? path : full}` }, { status: 404 });
      const answer = await route(req);
      return answer instanceof Response ? answer : Response.json(answer ?? null);
    });
  }
  return () => {
    for (const [key, desc] of saved) {
      if (desc) Object.defineProperty(g, key, desc);
      else delete g[key];
    }
  };
}

/** Aborts `to` when `from` aborts (now or later); returns the function that stops listening. */
function forwardAbort(from: AbortSignal | undefined, to: AbortController): () => void {
  if (!from) return () => {};
  if (from.aborted) {
    to.abort(from.reason);
    return () => {};
  }
  const onAbort = () => to.abort(from.reason);
  from.addEventListener('abort', onAbort, { once: true });
  return () => from.removeEventListener('abort', onAbort);
}

export interface RunToolResult {
  outcome: ExecuteOutcome;
  progress: { progress: number; total?: number; message?: string }[];
  logs: { level: LogLevel; message: string; data?: unknown }[];
}

export async function runTool(plugin: PluginDefinition, toolName: string, input: unknown, options: RunToolOptions = {}): Promise<RunToolResult> {
  const tool = plugin.tools.find((t) => t.name === toolName);
  if (!tool) throw new Error(`Plugin ${plugin.name} has no tool "${toolName}" (its tools: ${plugin.tools.map((t) => t.name).join(', ')}; runTool takes the name without the "${plugin.name}_" prefix)`);
  const progress: RunToolResult['progress'] = [];
  const logs: RunToolResult['logs'] = [];
  const defaults = Object.fromEntries(Object.entries(plugin.configSchema ?? {}).filter(([, f]) => f.default !== undefined).map(([k, f]) => [k, f.default]));
  const restore = installFakes(options);
  const full = `${plugin.name}_${tool.name}`;
  const controller = new AbortController();
  const stopForwarding = forwardAbort(options.signal, controller);
  const timeoutMs = options.timeoutMs ?? RUN_TOOL_TIMEOUT_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let giveUp: (o: ExecuteOutcome) => void = () => {};
  const timedOut = new Promise<ExecuteOutcome>((res) => (giveUp = res));
  const arm = () => {
    if (timeoutMs <= 0) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      const message = `${full} did not settle within ${timeoutMs} ms without progress (runTool's timeoutMs; a real call times out after 30 s): does the handler await something that never answers, or a route missing from \`routes\`?`;
      giveUp({ ok: false, error: { message, code: 'timeout', category: 'timeout', retryable: true } });
      controller.abort(new Error(`timed out after ${timeoutMs} ms`));
    }, timeoutMs);
  };
  let outcome: ExecuteOutcome;
  try {
    arm();
    outcome = await Promise.race([
      executeTool(plugin.name, tool, input, {
        signal: controller.signal,
        config: { ...defaults, ...options.config },
        configSchema: plugin.configSchema,
        callId: `test-${Math.random().toString(36).slice(2)}`,
        onProgress: (p) => {
          progress.push(p);
          arm();
        },
        onLog: (level, message, data) => logs.push({ level, message, ...(data !== undefined ? { data } : {}) }),
      }),
      timedOut,
    ]);
  } finally {
    clearTimeout(timer);
    stopForwarding();
    restore();
  }
  if (outcome.ok) {
    // The page sends results as JSON text within a size limit: what fails there fails here too.
    const sendable = sendableResult(`${plugin.name}_${tool.name}`, outcome.value);
    if (!sendable.ok) outcome = { ok: false, error: sendable.error };
  }
  return { outcome, progress, logs };
}
