/**
 * `npm run bench`: end-to-end figures in a real headless Chromium with the real extension, the
 * server in its own process, the fixture app and an SDK-built plugin. Never fails on time: prints
 * a table with each target next to the figure (met / not met) and writes
 * bench-results/e2e-<date>.json. Exit code 0 unless the bench itself crashes.
 *
 * Sections (see BENCHMARKS.md for what each measures and why):
 *   1. floor           WS → extension service worker → Port → ISOLATED → MAIN world and back
 *   2. plugin calls    bench_echo (trivial SDK tool) over REST, MCP full (through the official SDK
 *                      client, and as plain HTTP: lib/mcp-raw.ts), MCP gateway; in-flight throughput;
 *                      each round times the floor first, so both share the machine's minute
 *   3. built-in tools  one line per tool in BUILTIN_BENCH (a tool missing from it shows as a row)
 *   4. start-up        `bun cli/main.ts start --port 0` to /health, with 0 and 100 plugins (2,000 tools)
 *   5. memory          server RSS idle, after 10,000 calls, after 1,000 and 2,000 MCP sessions
 *   6. context cost    tools/list bytes, gateway list bytes, page-reading output vs page HTML
 *
 * Env: BENCH_PROFILE=1 writes a CPU profile (markdown) of the e2e server to bench-results/.
 *      BENCH_QUICK=1 runs fewer iterations (a smoke run of the bench itself).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { MEMORY_RELEASE_IDLE_MS, PAGE_TOOLS_UPDATES_PER_SECOND } from '../../server/limits.ts';
import { FRESH_MS } from '../../server/plugins/folder-cache.ts';
import { ensureExtensionBuilt } from '../../extension/build.ts';
import { BROWSER_TOOLS } from '../../server/tools/browser-catalog.ts';
import { readSecretSync } from '../../server/state/secret.ts';
import { buildServerBundle, bundleStaleReason } from '../../cli/server-bundle.ts';
import { startFixtureApp, FIXTURE_USER } from '../fixtures/app/server.ts';
import { buildTestapp, TESTAPP_DIR } from '../fixtures/app/testapp.ts';
import { connectMcp } from '../harness/fake-extension.ts';
import { articlePageHtml } from './lib/article-page.ts';
import { startFloor } from './lib/floor.ts';
import { rawMcpCaller, rawMcpSession } from './lib/mcp-raw.ts';
import { buildBenchPlugin, writeSyntheticPlugins } from './lib/plugins.ts';
import { BUN, ROOT, rssOf, rssParts, startServerChild, stopProc, waitForLine, type ServerProc } from './lib/proc.ts';
import { BENCH_LIMITS, cleanup, cleanups, waitUntil } from './lib/plumbing.ts';
import { mb, median, medianSummary, ms, round, summarize, table, timeConcurrent, timeSequential, type Summary } from './lib/stats.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const PROFILE = process.env.BENCH_PROFILE === '1';
const CHROMIUM = process.env.OPENTABS_CHROMIUM ?? '/usr/bin/chromium';
const RESULTS_DIR = join(ROOT, 'bench-results');
const PAGES_DIR = join(ROOT, 'test', 'fixtures', 'pages');

/** Iteration counts (bounded; QUICK divides them). */
const N = {
  rounds: QUICK ? 1 : 3,
  seq: QUICK ? 60 : 300,
  warmup: QUICK ? 10 : 50,
  floorSeq: QUICK ? 100 : 500,
  concurrent: QUICK ? 400 : 3000,
  builtin: QUICK ? 20 : 100,
  startupRuns: QUICK ? 2 : 5,
  sessions: QUICK ? 100 : 1000,
  callsForMemory: QUICK ? 1000 : 10_000,
};

const TARGETS = {
  /** bench_echo p50 over REST, MCP full and the gateway, each, relative to the floor's p50. */
  pluginToFloor: 1.2,
  /** bench_echo calls/s with 8 in flight, REST and MCP full (the floor's own figure is printed beside them). */
  callsPerSecAt8: 1500,
  listTabsP50Ms: 1.5,
  startupMs2000: 60,
  idleRssMb: 50,
  /** "Flat": RSS after the sessions within this many MB of before them. */
  sessionsRssGrowthMb: 5,
  toolsListBytesPerTool: 240,
  gatewayListBytes: 1600,
  /** A trivial page tool (WebMCP) call through MCP, relative to a trivial plugin tool call through MCP. */
  pageToolToPlugin: 1.5,
  /** registerTool in the page → tools/list_changed at an MCP client. */
  pageToolDiscoveryMs: 50,
};

// ---------------------------------------------------------------- plumbing


const log = (s: string) => console.error(`[bench] ${s}`);
const sleep = (msec: number) => new Promise((r) => setTimeout(r, msec));


function machine() {
  const chromiumVersion = spawnSync(CHROMIUM, ['--version'], { encoding: 'utf8' }).stdout.trim();
  const cpu = cpus()[0]?.model ?? 'unknown';
  return {
    nproc: availableParallelism(),
    cpu,
    ramGb: Number((totalmem() / 1024 ** 3).toFixed(1)),
    kernel: release(),
    bun: Bun.version,
    chromium: chromiumVersion,
    date: new Date().toISOString(),
    /** 1-minute load average when the bench started (other work on a shared machine skews figures). */
    loadAvgAtStart: Number(loadavg()[0]!.toFixed(2)),
  };
}

function writeConfig(dir: string, localPlugins: string[], permissions: Record<string, unknown> = {}): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ schemaVersion: 1, localPlugins, permissions, pluginSettings: {} }));
}

const ARTICLE_HTML = articlePageHtml();

/** Static fixture pages (test/fixtures/pages) and the bench article page on 127.0.0.1. */
function servePages() {
  const MIME: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css' };
  return Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const { pathname } = new URL(req.url);
      if (pathname === '/bench/article.html') return new Response(ARTICLE_HTML, { headers: { 'content-type': 'text/html; charset=utf-8' } });
      if (!pathname.startsWith('/pages/')) return new Response('not found', { status: 404 });
      const file = normalize(join(PAGES_DIR, decodeURIComponent(pathname.slice('/pages/'.length))));
      if (!file.startsWith(PAGES_DIR) || !existsSync(file)) return new Response('not found', { status: 404 });
      return new Response(readFileSync(file), { headers: { 'content-type': MIME[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' } });
    },
  });
}

type McpResult = { isError?: boolean; content?: { type: string; text?: string; data?: string }[]; structuredContent?: unknown };

/** Bytes an MCP result puts in the model's context: its content items (text, or image data). */
function contentBytes(r: McpResult): number {
  return (r.content ?? []).reduce((n, c) => n + Buffer.byteLength(c.text ?? c.data ?? ''), 0);
}

// ---------------------------------------------------------------- 4. start-up (no browser)

interface StartupFigures {
  plugins: number;
  tools: number;
  toHealthMs: Summary;
  toToolsLoadedMs: Summary;
  runs: number;
  /** Started from a `bun build` bundle of cli/main.ts (what bundling would buy), not the sources. */
  /** Timed with OPENTABS_NO_BUNDLE=1 (the sources, not the start-up bundle). */
  fromSource?: boolean;
}

/** One `opentabs start --port 0` on `dir`: ms to /health answering and to every tool listed. */
async function startOnce(dir: string, expectTools: number, bare = false, env: Record<string, string> = {}): Promise<{ health: number; loaded: number; proc: ReturnType<typeof spawn>; port: number }> {
  const t0 = performance.now();
  const script = bare ? [join(import.meta.dir, 'lib', 'bare-server.ts')] : [join(ROOT, 'cli', 'main.ts'), 'start', '--port', '0'];
  const proc = spawn(BUN, script, {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, OPENTABS_CONFIG_DIR: dir, NO_COLOR: '1', ...env },
  });
  try {
    const port = await waitForLine(proc, (l) => {
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(l);
      return m ? Number(m[1]) : undefined;
    }, 30_000, 'opentabs start');
    const url = `http://127.0.0.1:${port}`;
    let health = NaN;
    for (let i = 0; i < 30_000 && Number.isNaN(health); i++) {
      try {
        if ((await fetch(`${url}/health`)).ok) health = performance.now() - t0;
      } catch {
        await sleep(1);
      }
    }
    if (bare) return { health, loaded: health, proc, port };
    // Discovery may finish after the bind ("listen first"): also time until every tool is listed.
    let loaded = NaN;
    const secret = await waitUntil(async () => readSecretSync(dir), 'the secret file', 10_000);
    for (let i = 0; i < 30_000 && Number.isNaN(loaded); i++) {
      const r = await fetch(`${url}/health`, { headers: { Authorization: `Bearer ${secret}` } });
      const h = (await r.json()) as { pluginToolCount?: number };
      if ((h.pluginToolCount ?? 0) >= expectTools) loaded = performance.now() - t0;
      else await sleep(1);
    }
    return { health, loaded, proc, port };
  } catch (e) {
    await stopProc(proc);
    throw e;
  }
}

async function benchStartup(base: string): Promise<{ startup: StartupFigures[] } & Record<string, any>> {
  const synth = writeSyntheticPlugins(join(base, 'synth'), 100, 20);
  const variants = [
    { plugins: 0, dir: join(base, 'start-0'), paths: [] as string[] },
    { plugins: 100, dir: join(base, 'start-100'), paths: synth },
  ];
  const out: StartupFigures[] = [];
  const extra: Record<string, unknown> = {};
  // The floor: spawning Bun with a bare Bun.serve script until it answers.
  const bare: number[] = [];
  for (let run = 0; run <= N.startupRuns; run++) {
    const r = await startOnce(base, 0, true);
    if (run > 0) bare.push(r.health);
    await stopProc(r.proc);
  }
  extra.bareBunServeMs = summarize(bare);
  // `opentabs start` runs from its start-up bundle when it is fresh (cli/server-bundle.ts, built
  // by npm install); build it if this checkout's is stale, and time the sources beside it.
  const stale = bundleStaleReason();
  if (stale !== null) {
    log(`start-up bundle stale (${stale}): building it`);
    await buildServerBundle().catch((e) => log(`building the start-up bundle failed: ${(e as Error).message}`));
  }
  const bundleFresh = bundleStaleReason() === null;
  extra.startupBundle = bundleFresh ? 'fresh' : 'not used';
  // A user's plugin files were written long before a start; files written within FRESH_MS are
  // loaded in full until they are older (server/plugins/folder-cache.ts).
  await sleep(FRESH_MS + 100);
  for (const v of variants) {
    writeConfig(v.dir, v.paths);
    const tools = v.paths.length * 20;
    const health: number[] = [];
    const loaded: number[] = [];
    // Run 0 is a warm-up (first run installs the extension folder and creates the secret).
    for (let run = 0; run <= N.startupRuns; run++) {
      const r = await startOnce(v.dir, tools);
      const keep = run === N.startupRuns;
      if (run > 0) {
        health.push(r.health);
        loaded.push(r.loaded);
      }
      if (!keep) {
        await stopProc(r.proc);
        continue;
      }
      // The last server stays up a moment for figures that need a started server.
      try {
        const secret = readSecretSync(v.dir) ?? '';
        const auth = { Authorization: `Bearer ${secret}` };
        const url = `http://127.0.0.1:${r.port}`;
        await sleep(1500);
        extra[`rssIdle${v.plugins}`] = rssOf(r.proc.pid!);
        if (v.plugins === 100) {
          const mcp = await connectMcp(url, secret, '/mcp', 'bench');
          const gw = await connectMcp(url, secret, '/mcp/gateway', 'bench');
          try {
            let bytes = 0;
            let count = 0;
            const lat = await timeSequential(QUICK ? 5 : 20, 2, async () => {
              const l = await mcp.listTools();
              bytes = Buffer.byteLength(JSON.stringify(l));
              count = l.tools.length;
            });
            const gl = await gw.listTools();
            // The same list over raw HTTP (fetch + read the body, no client-side schema parsing):
            // what the server costs, apart from the SDK client's own validation of 2,000 tools.
            const hdr = { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
            const init = await fetch(`${url}/mcp`, { method: 'POST', headers: hdr, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }) });
            await init.text();
            const sh = { ...hdr, 'mcp-session-id': init.headers.get('mcp-session-id') ?? '' };
            const raw = await timeSequential(QUICK ? 5 : 20, 2, async () => {
              const r = await fetch(`${url}/mcp`, { method: 'POST', headers: sh, body: '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' });
              await r.text();
            });
            extra.toolsList2000 = { tools: count, bytes, bytesPerTool: bytes / count, latency: summarize(lat), serverLatency: summarize(raw) };
            extra.gatewayListBytes2000 = Buffer.byteLength(JSON.stringify(gl));
          } finally {
            await mcp.close().catch(() => {});
            await gw.close().catch(() => {});
          }
          const reloadWall: number[] = [];
          const reloadReported: number[] = [];
          for (let i = 0; i < (QUICK ? 2 : 5); i++) {
            const t0 = performance.now();
            const rr = await fetch(`${url}/reload`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{}' });
            await rr.text();
            reloadWall.push(performance.now() - t0);
            const h = (await (await fetch(`${url}/health`, { headers: auth })).json()) as { lastReloadDurationMs?: number };
            reloadReported.push(h.lastReloadDurationMs ?? NaN);
            if (!rr.ok) log(`/reload answered ${rr.status}`);
          }
          extra.reload2000 = { wall: summarize(reloadWall), reportedMs: median(reloadReported) };
          extra.rssAfterListAndReload2000 = rssOf(r.proc.pid!);
        }
      } finally {
        await stopProc(r.proc);
      }
    }
    out.push({ plugins: v.plugins, tools, toHealthMs: summarize(health), toToolsLoadedMs: summarize(loaded), runs: health.length });
    if (bundleFresh) {
      const bh: number[] = [];
      const bl: number[] = [];
      for (let run = 0; run <= N.startupRuns; run++) {
        const r = await startOnce(v.dir, tools, false, { OPENTABS_NO_BUNDLE: '1' });
        if (run > 0) {
          bh.push(r.health);
          bl.push(r.loaded);
        }
        await stopProc(r.proc);
      }
      out.push({ plugins: v.plugins, tools, toHealthMs: summarize(bh), toToolsLoadedMs: summarize(bl), runs: bh.length, fromSource: true });
    }
    log(`start-up with ${v.plugins} plugins: /health p50 ${ms(summarize(health).p50)} ms, tools loaded p50 ${ms(summarize(loaded).p50)} ms`);
  }
  return { startup: out, ...extra };
}

// ---------------------------------------------------------------- 1–3, 5, 6: the browser part

/** The built-in tools the bench repeats, by name. A tool added to the catalog is one line here. */
type BuiltinCtx = { tabIndex: number; tabApp: number; tabB: number; tabArticle: number; urlB: string; appUrl: string; pagesBase: string; windowId: number };
type BuiltinEntry =
  | {
      args: (c: BuiltinCtx, i: number) => Record<string, unknown>;
      n?: number;
      pauseMs?: number;
      /** Untimed call before each timed one (e.g. enable capture before timing its disable). */
      prep?: { tool: string; args: (c: BuiltinCtx) => Record<string, unknown> };
    }
  | { skip: string };
const BUILTIN_BENCH: Record<string, BuiltinEntry> = {
  browser_list_tabs: { args: () => ({}) },
  browser_open_tab: { skip: 'opens a tab per call (not repeatable as is)' },
  browser_close_tab: { skip: 'closes a tab per call' },
  browser_navigate_tab: { args: (c, i) => ({ tabId: c.tabB, url: `${c.urlB}?i=${i}` }), n: 30 },
  browser_go_back: { skip: 'depends on history state' },
  browser_go_forward: { skip: 'depends on history state' },
  browser_reload_tab: { args: (c) => ({ tabId: c.tabB }), n: 30 },
  browser_focus_tab: { args: (c) => ({ tabId: c.tabB }) },
  browser_get_tab_info: { args: (c) => ({ tabId: c.tabIndex }) },
  browser_list_windows: { args: () => ({}) },
  browser_create_window: { skip: 'opens a window per call' },
  browser_close_window: { skip: 'closes a window' },
  browser_snapshot: { args: (c) => ({ tabId: c.tabApp }) },
  browser_get_tab_content: { args: (c) => ({ tabId: c.tabApp }) },
  browser_get_page_html: { args: (c) => ({ tabId: c.tabApp }) },
  browser_query_elements: { args: (c) => ({ tabId: c.tabApp, selector: 'li, a, button' }) },
  browser_wait_for_element: { args: (c) => ({ tabId: c.tabIndex, selector: 'h1' }) },
  // Chrome allows 2 captureVisibleTab calls a second: a handful only.
  browser_screenshot_tab: { args: (c) => ({ tabId: c.tabB, format: 'jpeg', quality: 50 }), n: 6, pauseMs: 600 },
  browser_click_element: { args: (c) => ({ tabId: c.tabArticle, selector: 'h1' }) },
  browser_type_text: { args: (c) => ({ tabId: c.tabArticle, selector: 'input[name=name]', text: 'bench', clear: true }) },
  browser_select_option: { args: (c, i) => ({ tabId: c.tabArticle, selector: 'select[name=topic]', value: i % 2 ? 'a' : 'b' }) },
  browser_press_key: { args: (c) => ({ tabId: c.tabArticle, key: 'Tab' }) },
  browser_scroll: { args: (c, i) => ({ tabId: c.tabArticle, direction: i % 2 ? 'up' : 'down', distance: 200 }) },
  browser_hover_element: { args: (c) => ({ tabId: c.tabArticle, selector: 'h1' }) },
  browser_execute_script: { args: (c) => ({ tabId: c.tabArticle, code: '1 + 1' }) },
  browser_get_storage: { args: (c) => ({ tabId: c.tabApp }) },
  browser_get_cookies: { args: (c) => ({ url: c.appUrl }) },
  browser_set_cookie: { args: (c, i) => ({ url: c.pagesBase, name: 'bench', value: String(i) }) },
  browser_delete_cookies: { args: (c) => ({ url: c.pagesBase, name: 'bench' }) },
  // Console and network tools on tab B (they attach the debugger; the bench plugin's tab stays clean).
  browser_get_console_logs: { args: (c) => ({ tabId: c.tabB }) },
  browser_clear_console_logs: { args: (c) => ({ tabId: c.tabB }) },
  browser_enable_network_capture: { args: (c) => ({ tabId: c.tabB }) },
  browser_get_network_requests: { args: (c) => ({ tabId: c.tabB }) },
  browser_get_websocket_frames: { args: (c) => ({ tabId: c.tabB }) },
  browser_export_har: { args: (c) => ({ tabId: c.tabB }) },
  browser_disable_network_capture: { args: (c) => ({ tabId: c.tabB }), n: 30, prep: { tool: 'browser_enable_network_capture', args: (c) => ({ tabId: c.tabB }) } },
  extension_get_state: { args: () => ({}) },
  extension_get_logs: { args: () => ({ limit: 20 }) },
  extension_check_adapter: { args: () => ({ plugin: 'bench' }) },
  extension_reload: { skip: 'reloads the extension' },
  plugin_list_tabs: { args: () => ({}) },
  // Tab groups: tab B is grouped (or ungrouped) before each timed call, so every call does the work.
  browser_list_tab_groups: { args: () => ({}) },
  browser_group_tabs: { args: (c) => ({ tabIds: [c.tabB] }), n: 30, prep: { tool: 'browser_ungroup_tabs', args: (c) => ({ tabIds: [c.tabB] }) } },
  browser_update_tab_group: { skip: 'needs the id of a group browser_group_tabs just made' },
  browser_ungroup_tabs: { args: (c) => ({ tabIds: [c.tabB] }), n: 30, prep: { tool: 'browser_group_tabs', args: (c) => ({ tabIds: [c.tabB] }) } },
  browser_list_recently_closed: { args: () => ({ limit: 10 }) },
  browser_restore_closed: { skip: 'reopens a closed tab per call' },
  browser_update_window: { args: (c) => ({ windowId: c.windowId, focused: true }) },
  browser_wait_for: { args: (c) => ({ tabId: c.tabArticle, text: 'How a tool call travels' }) },
  browser_get_styles: { args: (c) => ({ tabId: c.tabArticle, selector: 'h1', properties: ['color', 'font-size', 'display'] }) },
  browser_accessibility_audit: { args: (c) => ({ tabId: c.tabArticle }) },
  browser_handle_dialog: { skip: 'needs a dialog open in the tab (test/e2e/tools-dialog-form.test.ts)' },
  browser_fill_form: { args: (c, i) => ({ tabId: c.tabArticle, fields: [{ selector: 'input[name=name]', value: `bench ${i}` }, { selector: 'select[name=topic]', value: i % 2 ? 'a' : 'b' }] }) },
  // On the app tab: after a second media change Chrome delivers mouse moves to a background tab
  // about once a second (BENCHMARKS.md), which would slow the pointer rows on tab B.
  browser_emulate: { args: (c, i) => ({ tabId: c.tabApp, colorScheme: i % 2 ? 'dark' : 'light' }) },
  browser_get_network_request: { skip: 'needs a request id from browser_get_network_requests' },
  browser_intercept_requests: { args: (c) => ({ tabId: c.tabB }) },
  browser_search_history: { args: () => ({ query: '127.0.0.1', limit: 10 }) },
  browser_search_bookmarks: { args: () => ({ query: 'bench' }) },
  // An origin no page of the bench uses: the browsing-data call's own cost.
  browser_clear_site_data: { args: () => ({ origin: 'http://127.0.0.1:9' }), n: 30 },
  browser_download: { skip: 'writes a file into the downloads folder per call' },
  browser_list_downloads: { args: () => ({ limit: 10 }) },
  plugin_draft_from_capture: { skip: 'writes a plugin project per call' },
  // Clicks by coordinates on tab B (a two-line page: nothing there navigates when clicked).
  browser_click_at: { args: (c) => ({ tabId: c.tabB, x: 5, y: 5 }) },
  browser_move_mouse: { args: (c, i) => ({ tabId: c.tabArticle, x: 5 + (i % 50), y: 5 }) },
  browser_drag: { args: (c) => ({ tabId: c.tabArticle, sourceSelector: 'h1', targetSelector: 'header button' }) },
  browser_upload_file: { skip: 'needs a file in a folder the user allowed' },
  browser_print_pdf: { args: (c) => ({ tabId: c.tabArticle }), n: 6 },
  browser_force_pseudo_state: { args: (c, i) => ({ tabId: c.tabArticle, selector: 'h1', states: i % 2 ? ['hover'] : [] }) },
  browser_performance_trace: { args: (c) => ({ tabId: c.tabB, action: 'stop' }), n: 6, prep: { tool: 'browser_performance_trace', args: (c) => ({ tabId: c.tabB, action: 'start' }) } },
};
/** Order: read-only tools first, then the ones that change tab B. */
const BUILTIN_LAST = ['browser_focus_tab', 'browser_screenshot_tab', 'browser_reload_tab', 'browser_navigate_tab'];

async function benchBrowser(base: string) {
  const results: Record<string, unknown> = {};
  await ensureExtensionBuilt();
  await buildTestapp();
  const benchDir = join(base, 'bench-plugin');
  const benchMatch = 'http://127.0.0.1/pages/index.html*';
  await buildBenchPlugin(benchDir, benchMatch);

  const app = await startFixtureApp();
  cleanups.push(() => app.stop());
  const pages = servePages();
  cleanups.push(() => pages.stop(true));
  const pagesBase = `http://127.0.0.1:${pages.port}`;
  const floor = startFloor(benchMatch);
  cleanups.push(() => floor.stop());
  cleanups.push(() => rmSync(floor.extDir, { recursive: true, force: true }));

  const cfg = join(base, 'e2e-config');
  // Built-in tools that ship 'off' or 'ask' are switched to auto so the bench can time them.
  const browserAuto = Object.fromEntries(BROWSER_TOOLS.filter((t) => t.defaultPermission !== 'auto' && t.name in BUILTIN_BENCH).map((t) => [t.name, 'auto']));
  writeConfig(cfg, [TESTAPP_DIR, benchDir], { testapp: { default: 'auto' }, bench: { default: 'auto' }, browser: { tools: browserAuto } });
  // Page tools (WebMCP) of the fixture pages run without asking, like the bench plugin's.
  writeFileSync(join(cfg, 'config.json'), JSON.stringify({ ...JSON.parse(readFileSync(join(cfg, 'config.json'), 'utf8')), pageOrigins: { [pagesBase]: 'auto' } }));
  const profFlags = PROFILE ? ['--cpu-prof-md', `--cpu-prof-dir=${RESULTS_DIR}`] : [];
  const srv: ServerProc = await startServerChild(cfg, BENCH_LIMITS, profFlags);
  cleanups.push(() => srv.stop());
  const rest = async (name: string, args: Record<string, unknown> = {}) => {
    const r = await fetch(`${srv.url}/tools/${name}/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: args }) });
    const body = (await r.json()) as { result?: any; error?: any };
    return { status: r.status, body };
  };
  const health = async () => (await (await fetch(`${srv.url}/health`, { headers: srv.auth })).json()) as any;

  await sleep(1500);
  const rss: Record<string, number> = { idleNoExtension: rssOf(srv.pid) };

  const extDir = join(cfg, 'extension');
  const profile = mkdtempSync(join(tmpdir(), 'opentabs-bench-chrome-'));
  cleanups.push(() => rmSync(profile, { recursive: true, force: true }));
  const context: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      `--disable-extensions-except=${extDir},${floor.extDir}`,
      `--load-extension=${extDir},${floor.extDir}`,
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  cleanups.push(() => context.close());
  await waitUntil(async () => (await health()).extensionConnected === true, 'the OpenTabs extension to connect', 30_000);

  const pageIndex: Page = await context.newPage();
  await pageIndex.goto(`${pagesBase}/pages/index.html`);
  const pageApp: Page = await context.newPage();
  await pageApp.goto(`${app.url}/login`);
  await pageApp.fill('#username', FIXTURE_USER.username);
  await pageApp.fill('#password', FIXTURE_USER.password);
  await Promise.all([pageApp.waitForURL(`${app.url}/app`), pageApp.click('#login')]);
  const pageB: Page = await context.newPage();
  const urlB = `${pagesBase}/pages/second.html`;
  await pageB.goto(urlB);
  const pageArticle: Page = await context.newPage();
  await pageArticle.goto(`${pagesBase}/bench/article.html`);
  const tabState = (h: any, name: string) => h.pluginDetails?.find((p: { name: string }) => p.name === name)?.tabState;
  await waitUntil(async () => {
    const h = await health();
    return tabState(h, 'bench') === 'ready' && tabState(h, 'testapp') === 'ready';
  }, 'bench and testapp tabs ready', 30_000);
  await floor.ready(20_000);
  await sleep(1000);
  rss.idleExtensionConnected = rssOf(srv.pid);
  const idleSplit = rssParts(srv.pid);
  // What an idle server holds: the memory keeper gives memory back after MEMORY_RELEASE_IDLE_MS
  // without a request (start-up and the set-up above count as use).
  await sleep(MEMORY_RELEASE_IDLE_MS + 1000);
  rss.idleExtensionReleased = rssOf(srv.pid);
  let callsMade = 0;

  const tabs = ((await rest('browser_list_tabs')).body.result?.tabs ?? []) as { id: number; url: string; windowId?: number }[];
  const tabOf = (url: string) => {
    const t = tabs.find((x) => x.url === url);
    if (!t) throw new Error(`no tab with url ${url} in browser_list_tabs: ${JSON.stringify(tabs.map((x) => x.url))}`);
    return t;
  };
  const tIndex = tabOf(`${pagesBase}/pages/index.html`);
  const bctx: BuiltinCtx = { tabIndex: tIndex.id, tabApp: tabOf(`${app.url}/app`).id, tabB: tabOf(urlB).id, tabArticle: tabOf(`${pagesBase}/bench/article.html`).id, urlB, appUrl: app.url, pagesBase, windowId: tIndex.windowId ?? 0 };

  // ---- 1. floor (its round trips are timed in each round of section 2, next to the product's)
  const httpFloor = summarize(await timeSequential(N.floorSeq, 50, async () => void (await (await fetch(`${srv.url}/health`)).text())));

  // ---- 2. plugin calls
  log('floor and plugin calls …');
  const mcp: Client = await connectMcp(srv.url, srv.secret, '/mcp', 'bench');
  const gw: Client = await connectMcp(srv.url, srv.secret, '/mcp/gateway', 'bench');
  cleanups.push(() => mcp.close());
  cleanups.push(() => gw.close());
  const rawMcp = rawMcpCaller(srv.url, await rawMcpSession(srv.url, srv.secret));
  const expectEcho = (v: unknown, via: string) => {
    if ((v as { text?: string })?.text !== 'hi') throw new Error(`${via}: bench_echo returned ${JSON.stringify(v)}`);
  };
  const callers: Record<string, () => Promise<boolean>> = {
    rest: async () => {
      const r = await rest('bench_echo', { text: 'hi' });
      callsMade++;
      if (r.status !== 200) throw new Error(`REST bench_echo: ${r.status} ${JSON.stringify(r.body)}`);
      expectEcho(r.body.result, 'REST');
      return true;
    },
    mcp: async () => {
      const r = (await mcp.callTool({ name: 'bench_echo', arguments: { text: 'hi' } })) as McpResult;
      callsMade++;
      if (r.isError) throw new Error(`MCP bench_echo: ${JSON.stringify(r.content)}`);
      expectEcho(r.structuredContent ?? JSON.parse(r.content?.[0]?.text ?? 'null'), 'MCP');
      return true;
    },
    mcpRaw: async () => {
      const r = await rawMcp('bench_echo', '{"text":"hi"}');
      callsMade++;
      expectEcho(r.structuredContent, 'MCP raw');
      return true;
    },
    gateway: async () => {
      const r = (await gw.callTool({ name: 'opentabs_call', arguments: { tool: 'bench_echo', arguments: { text: 'hi' } } })) as McpResult;
      callsMade++;
      if (r.isError) throw new Error(`gateway bench_echo: ${JSON.stringify(r.content)}`);
      expectEcho(r.structuredContent ?? JSON.parse(r.content?.[0]?.text ?? 'null'), 'gateway');
      return true;
    },
  };
  // Each round times the floor and then every product path, so a busy minute of the shared
  // machine falls on the floor and on the figures divided by it alike.
  const seqRuns: Record<string, Summary[]> = { rest: [], mcp: [], mcpRaw: [], gateway: [] };
  const floorRuns: Summary[] = [];
  for (let r = 0; r < N.rounds; r++) {
    floorRuns.push(summarize(await timeSequential(N.floorSeq, 100, (i) => floor.roundTrip(r * 100_000 + i + 1000))));
    for (const via of Object.keys(callers)) seqRuns[via]!.push(summarize(await timeSequential(N.seq, N.warmup, callers[via]!)));
  }
  results.floor = { extensionRoundTrip: medianSummary(floorRuns), runs: floorRuns, httpHealthUnauth: httpFloor };
  const seq = Object.fromEntries(Object.entries(seqRuns).map(([k, v]) => [k, medianSummary(v)]));
  const concurrent: Record<string, { callsPerSec: number; ok: number; failed: number; wallMs: number; runs?: number[] }> = {};
  {
    // The floor's own throughput with the same pipelining (8 round trips in flight), each round
    // right before the product's: the ceiling this machine sets, measured in the same minute.
    // REST and MCP (SDK client and plain HTTP) the same way: as many calls, in every round, right
    // after the floor's.
    const runs: Record<'floor' | 'rest' | 'mcp' | 'mcpRaw', Awaited<ReturnType<typeof timeConcurrent>>[]> = { floor: [], rest: [], mcp: [], mcpRaw: [] };
    let f = 2_000_000;
    for (let r = 0; r < N.rounds; r++) {
      runs.floor.push(await timeConcurrent(N.concurrent, 8, async () => (await floor.roundTrip(f++), true)));
      for (const via of ['rest', 'mcp', 'mcpRaw'] as const) runs[via].push(await timeConcurrent(N.concurrent, 8, () => callers[via]!()));
    }
    const mid = <T extends { callsPerSec: number }>(xs: T[]) => [...xs].sort((a, b) => a.callsPerSec - b.callsPerSec)[Math.floor(xs.length / 2)]!;
    for (const via of ['floor', 'rest', 'mcp', 'mcpRaw'] as const) concurrent[`${via}8`] = { ...mid(runs[via]), runs: runs[via].map((x) => round(x.callsPerSec, 0)!) };
  }
  concurrent.rest32 = await timeConcurrent(N.concurrent, 32, () => callers.rest!());
  concurrent.mcp32 = await timeConcurrent(Math.round(N.concurrent / 2), 32, () => callers.mcp!());
  // A realistic plugin tool: testapp_get_item fetches /api/items/1 from the fixture app in the page.
  const getItem = summarize(
    await timeSequential(N.seq, N.warmup, async () => {
      const r = await rest('testapp_get_item', { id: 1 });
      callsMade++;
      if (r.status !== 200 || r.body.result?.id !== 1) throw new Error(`testapp_get_item: ${r.status} ${JSON.stringify(r.body)}`);
    }),
  );
  results.pluginCalls = { tool: 'bench_echo', sequential: seq, runs: seqRuns, concurrent, testappGetItemRest: getItem, limits: BENCH_LIMITS };

  // ---- 2b. page tools (WebMCP): a trivial page tool call through MCP next to bench_echo through
  // MCP, and discovery (registerTool in the page → tools/list_changed at the MCP client)
  log('page tools …');
  {
    const pageTools: Page = await context.newPage();
    await pageTools.goto(`${pagesBase}/pages/page-tools-shim.html?bench`);
    const shimTab = ((await rest('browser_list_tabs')).body.result?.tabs as { id: number; url: string }[]).find((t) => t.url.endsWith('page-tools-shim.html?bench'))!.id;
    const toolName = `tab${shimTab}_listTodos`;
    await waitUntil(async () => (await mcp.listTools()).tools.some((t) => t.name === toolName), 'page tools listed', 20_000);
    const pageRuns: Summary[] = [];
    const pluginRuns: Summary[] = [];
    for (let r = 0; r < N.rounds; r++) {
      pageRuns.push(
        summarize(
          await timeSequential(N.seq, N.warmup, async () => {
            const res = (await mcp.callTool({ name: toolName, arguments: {} })) as McpResult;
            callsMade++;
            if (res.isError || res.content?.at(-1)?.text !== '[]') throw new Error(`MCP ${toolName}: ${JSON.stringify(res.content)}`);
          }),
        ),
      );
      pluginRuns.push(summarize(await timeSequential(N.seq, N.warmup, () => callers.mcp!())));
    }
    let changed: (() => void) | null = null;
    mcp.setNotificationHandler(ToolListChangedNotificationSchema, async () => changed?.());
    const discovery: number[] = [];
    for (let i = 0; i < (QUICK ? 10 : 30); i++) {
      const seen = new Promise<void>((resolve) => (changed = resolve));
      const t0 = performance.now();
      await pageTools.evaluate((n) => (navigator as any).modelContext.registerTool({ name: n, description: 'bench', inputSchema: { type: 'object' }, execute: () => ({ content: [] }) }), `d${i}`);
      await seen;
      discovery.push(performance.now() - t0);
      const gone = new Promise<void>((resolve) => (changed = resolve));
      await pageTools.evaluate((n) => (navigator as any).modelContext.unregisterTool(n), `d${i}`);
      await gone;
      // Stay under the page's update rate (PAGE_TOOLS_UPDATES_PER_SECOND): a page that churns faster is held back on purpose.
      await sleep(Math.ceil((2 * 1000) / PAGE_TOOLS_UPDATES_PER_SECOND));
    }
    changed = null;
    await pageTools.close();
    results.pageTools = { tool: 'listTodos (shim page)', mcp: medianSummary(pageRuns), pluginMcp: medianSummary(pluginRuns), runs: pageRuns, discovery: summarize(discovery) };
  }

  // ---- 3. built-in tools
  log('built-in tools …');
  const builtins: Record<string, { p50?: number; p99?: number; n?: number; skipped?: string; error?: string }> = {};
  const names = BROWSER_TOOLS.map((t) => t.name);
  const ordered = [...names.filter((n) => !BUILTIN_LAST.includes(n)), ...BUILTIN_LAST.filter((n) => names.includes(n))];
  for (const name of ordered) {
    const entry = BUILTIN_BENCH[name];
    if (!entry) {
      builtins[name] = { skipped: 'not in BUILTIN_BENCH (add one line to test/bench/e2e.ts)' };
      continue;
    }
    if ('skip' in entry) {
      builtins[name] = { skipped: entry.skip };
      continue;
    }
    const n = Math.min(entry.n ?? N.builtin, N.builtin);
    const runs = name === 'browser_list_tabs' ? N.rounds : 1;
    try {
      const summaries: Summary[] = [];
      const once = async (i: number) => {
        const res = await rest(name, entry.args(bctx, i));
        callsMade++;
        if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
      };
      for (let r = 0; r < runs; r++) {
        const samples: number[] = [];
        for (let i = -Math.min(5, n); i < n; i++) {
          if (entry.prep) {
            const p = await rest(entry.prep.tool, entry.prep.args(bctx));
            if (p.status !== 200) throw new Error(`prep ${entry.prep.tool}: ${p.status} ${JSON.stringify(p.body).slice(0, 200)}`);
          }
          const t0 = performance.now();
          await once(r * 1000 + i + 10);
          if (i >= 0) samples.push(performance.now() - t0);
          if (entry.pauseMs) await sleep(entry.pauseMs);
        }
        summaries.push(summarize(samples));
      }
      const s = medianSummary(summaries);
      builtins[name] = { p50: s.p50, p99: s.p99, n: s.n };
    } catch (e) {
      builtins[name] = { error: (e as Error).message.slice(0, 300) };
    }
  }
  for (const name of Object.keys(BUILTIN_BENCH)) if (!names.includes(name)) builtins[name] = { skipped: 'in BUILTIN_BENCH but not in the catalog' };
  results.builtins = builtins;

  // ---- cost attribution: the same REST call with parts of the server's work switched off
  log('cost attribution …');
  const variants = ['none', 'audit-nowait', 'no-invocation-notify', 'invocation-start-after-dispatch', 'audit-nowait,no-invocation-notify'];
  const attrib: Record<string, { p50: number[]; cps: number[] }> = Object.fromEntries(variants.map((v) => [v, { p50: [], cps: [] }]));
  let spanS: Summary | null = null;
  for (let r = 0; r < N.rounds; r++) {
    for (const variant of variants) {
      await srv.command(`variant ${variant}`);
      if (variant === 'none') await srv.command('spans');
      attrib[variant]!.p50.push(summarize(await timeSequential(Math.round(N.seq * 0.7), 20, callers.rest!)).p50);
      if (variant === 'none' && r === 0) spanS = summarize((await srv.command('spans')).spans as number[]);
      attrib[variant]!.cps.push((await timeConcurrent(Math.round(N.concurrent / 3), 8, callers.rest!)).callsPerSec);
    }
  }
  await srv.command('variant none');
  results.attribution = {
    variants: Object.fromEntries(Object.entries(attrib).map(([k, v]) => [k, { restP50: median(v.p50), callsPerSecAt8: median(v.cps), p50Runs: v.p50, cpsRuns: v.cps }])),
    extensionRoundTripSeenByServer: spanS,
  };

  // ---- 6. context cost (before the memory part: same server, small catalog)
  log('context cost …');
  const fullList = await mcp.listTools();
  const fullBytes = Buffer.byteLength(JSON.stringify(fullList));
  const gwBytes = Buffer.byteLength(JSON.stringify(await gw.listTools()));
  // What a gateway session reads first: opentabs_list_tools without arguments (its text content).
  const gwIndexBytes = contentBytes((await gw.callTool({ name: 'opentabs_list_tools', arguments: {} })) as McpResult);
  const reading: Record<string, Record<string, number>> = {};
  // A fresh load: the acting tools above typed, scrolled and chose options on it.
  await pageArticle.reload();
  const tabArticle = bctx.tabArticle;
  for (const [label, page, tabId] of [
    ['article page (web-app-shaped)', pageArticle, tabArticle],
    ['fixture app /app', pageApp, bctx.tabApp],
  ] as const) {
    const row: Record<string, number> = { pageHtmlBytes: Buffer.byteLength(await page.content()) };
    for (const tool of ['browser_get_tab_content', 'browser_snapshot', 'browser_get_page_html']) {
      if (!names.includes(tool)) continue;
      const r = (await mcp.callTool({ name: tool, arguments: { tabId } })) as McpResult;
      row[tool] = r.isError ? NaN : contentBytes(r);
      if (tool === 'browser_snapshot' && !r.isError) {
        const r2 = (await mcp.callTool({ name: tool, arguments: { tabId, interactiveOnly: true } })) as McpResult;
        row['browser_snapshot interactiveOnly'] = r2.isError ? NaN : contentBytes(r2);
      }
    }
    reading[label] = row;
  }

  results.context = { toolsList: { tools: fullList.tools.length, bytes: fullBytes, bytesPerTool: fullBytes / fullList.tools.length, approxTokens: Math.round(fullBytes / 4) }, gatewayListBytes: gwBytes, gatewayIndexBytes: gwIndexBytes, reading };

  // ---- 5. memory
  log('memory …');
  const before10k = rssOf(srv.pid);
  /** After a forced full GC in the server: retained memory (a leak grows here), unlike raw RSS. */
  const gcPoints: Record<string, { rss: number; heapUsed: number }> = {};
  const gcPoint = async (label: string) => {
    const r = (await srv.command('gc')) as { rss: number; heapUsed: number };
    gcPoints[label] = { rss: r.rss, heapUsed: r.heapUsed };
  };
  if (callsMade < N.callsForMemory) await timeConcurrent(N.callsForMemory - callsMade, 8, () => callers.rest!());
  await sleep(2000);
  rss.after10kCalls = rssOf(srv.pid);
  await gcPoint('callsA');
  const callsA = callsMade;
  // Two more batches of the same size: a leak keeps growing, a high-water mark levels off.
  await timeConcurrent(N.callsForMemory, 8, () => callers.rest!());
  await sleep(2000);
  rss.afterMoreCalls = rssOf(srv.pid);
  await gcPoint('callsB');
  const callsB = callsMade;
  await timeConcurrent(N.callsForMemory, 8, () => callers.rest!());
  await sleep(2000);
  rss.afterEvenMoreCalls = rssOf(srv.pid);
  await gcPoint('callsC');
  const callsC = callsMade;
  const sessionsRun = async (count: number) => {
    const hdr = { ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    let failed = 0;
    for (let i = 0; i < count; i++) {
      const path = i % 2 === 0 ? '/mcp' : '/mcp/gateway';
      const init = await fetch(srv.url + path, {
        method: 'POST',
        headers: hdr,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }),
      });
      await init.text();
      const sid = init.headers.get('mcp-session-id');
      if (!init.ok || !sid) {
        failed++;
        continue;
      }
      const sh = { ...hdr, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
      await (await fetch(srv.url + path, { method: 'POST', headers: sh, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
      await (await fetch(srv.url + path, { method: 'POST', headers: sh, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) })).text();
      const del = await fetch(srv.url + path, { method: 'DELETE', headers: sh });
      await del.text();
      if (!del.ok) failed++;
    }
    return failed;
  };
  rss.beforeSessions = rssOf(srv.pid);
  await gcPoint('beforeSessions');
  const failed1 = await sessionsRun(N.sessions);
  await sleep(2000);
  rss.after1000Sessions = rssOf(srv.pid);
  await gcPoint('after1000Sessions');
  const failed2 = await sessionsRun(N.sessions);
  await sleep(2000);
  rss.after2000Sessions = rssOf(srv.pid);
  await gcPoint('after2000Sessions');
  const h = await health();
  // Quiet from here on: the memory keeper gives memory back after MEMORY_RELEASE_IDLE_MS.
  await sleep(MEMORY_RELEASE_IDLE_MS + 2000);
  rss.afterQuietSpell = rssOf(srv.pid);
  const quietSplit = rssParts(srv.pid);
  results.memory = { rss, split: { idle: idleSplit, quiet: quietSplit }, afterGc: gcPoints, before10k, callsA, callsB, callsC, sessionsFailed: failed1 + failed2, mcpClientsAfter: h.mcpClients, sessionsPerBatch: N.sessions };

  await pageIndex.close().catch(() => {});
  return { results, srv };
}

// ---------------------------------------------------------------- report

function report(m: ReturnType<typeof machine>, st: Awaited<ReturnType<typeof benchStartup>>, br: Record<string, any>): string {
  const lines: string[] = [];
  const tgt = (ok: boolean | null) => (ok === null ? 'n/a' : ok ? 'met' : 'NOT met');
  lines.push(`OpenTabs end-to-end bench — ${m.date}`);
  lines.push(`machine: ${m.nproc} cores, ${m.cpu}, ${m.ramGb} GB RAM, Linux ${m.kernel}; Bun ${m.bun}; ${m.chromium}`);
  lines.push(`load average (1 min): ${m.loadAvgAtStart} at start, ${loadavg()[0]!.toFixed(2)} at end — figures on a busy shared machine vary run to run`);
  lines.push('');
  const rows: (string | number)[][] = [];
  const floor = br.floor.extensionRoundTrip as Summary;
  rows.push([`floor: WS→SW→Port→ISOLATED→MAIN→back (${N.floorSeq}×${N.rounds})`, ms(floor.p50), ms(floor.p90), ms(floor.p99), '', '']);
  rows.push(['  (ref) HTTP GET /health, no auth', ms(br.floor.httpHealthUnauth.p50), ms(br.floor.httpHealthUnauth.p90), ms(br.floor.httpHealthUnauth.p99), '', '']);
  const viaName: Record<string, string> = { rest: 'rest', mcp: 'mcp (SDK client)', mcpRaw: 'mcp (plain HTTP)', gateway: 'gateway (SDK client)' };
  for (const via of ['rest', 'mcp', 'mcpRaw', 'gateway']) {
    const s = br.pluginCalls.sequential[via] as Summary | undefined;
    if (!s) continue;
    const ratio = s.p50 / floor.p50;
    rows.push([`bench_echo via ${viaName[via]} (${N.seq}×${N.rounds})`, ms(s.p50), ms(s.p90), ms(s.p99), `${ratio.toFixed(2)}× floor`, `≤${TARGETS.pluginToFloor}× floor: ${tgt(ratio <= TARGETS.pluginToFloor)}`]);
  }
  const gi = br.pluginCalls.testappGetItemRest as Summary;
  rows.push(['testapp_get_item via rest (page fetch)', ms(gi.p50), ms(gi.p90), ms(gi.p99), `${(gi.p50 / floor.p50).toFixed(2)}× floor`, '']);
  if (br.pageTools) {
    const pt = br.pageTools.mcp as Summary;
    const pl = br.pageTools.pluginMcp as Summary;
    const ratio = pt.p50 / pl.p50;
    rows.push([`page tool (WebMCP) via mcp (${N.seq}×${N.rounds})`, ms(pt.p50), ms(pt.p90), ms(pt.p99), `${ratio.toFixed(2)}× bench_echo mcp (${ms(pl.p50)})`, `≤${TARGETS.pageToolToPlugin}×: ${tgt(ratio <= TARGETS.pageToolToPlugin)}`]);
    const d = br.pageTools.discovery as Summary;
    rows.push(['page tool discovery: registerTool → list_changed', ms(d.p50), ms(d.p90), ms(d.p99), '', `p99≤${TARGETS.pageToolDiscoveryMs}: ${tgt(d.p99 <= TARGETS.pageToolDiscoveryMs)}`]);
  }
  lines.push(table(['latency (ms)', 'p50', 'p90', 'p99', 'ratio', 'target'], rows));
  lines.push('');
  const c = br.pluginCalls.concurrent;
  const floor8 = c.floor8 as { callsPerSec: number; ok: number; failed: number; runs: number[] } | undefined;
  const vsFloor = (cps: number) => (floor8 ? `${((cps / floor8.callsPerSec) * 100).toFixed(0)} % of the floor's` : '');
  lines.push(
    table(
      ['throughput bench_echo', 'calls/s', 'ok', 'failed', 'vs floor', 'target'],
      [
        ...(floor8 ? [[`floor, 8 in flight (median of ${floor8.runs.length}: ${floor8.runs.join(', ')}): what the machine allows`, Math.round(floor8.callsPerSec), floor8.ok, floor8.failed, '', `≥${TARGETS.callsPerSecAt8}: ${tgt(floor8.callsPerSec >= TARGETS.callsPerSecAt8)}`]] : []),
        [`REST, 8 in flight (median of ${c.rest8.runs.length}: ${c.rest8.runs.join(', ')})`, Math.round(c.rest8.callsPerSec), c.rest8.ok, c.rest8.failed, vsFloor(c.rest8.callsPerSec), `≥${TARGETS.callsPerSecAt8}: ${tgt(c.rest8.callsPerSec >= TARGETS.callsPerSecAt8)}`],
        ['REST, 32 in flight', Math.round(c.rest32.callsPerSec), c.rest32.ok, c.rest32.failed, '', ''],
        ...(['mcp8', 'mcpRaw8'] as const)
          .filter((k) => c[k])
          .map((k) => [
            `MCP full${k === 'mcp8' ? ', SDK client' : ', plain HTTP'}, 8 in flight${c[k].runs ? ` (median of ${c[k].runs.length}: ${c[k].runs.join(', ')})` : ''}`,
            Math.round(c[k].callsPerSec),
            c[k].ok,
            c[k].failed,
            vsFloor(c[k].callsPerSec),
            `≥${TARGETS.callsPerSecAt8}: ${tgt(c[k].callsPerSec >= TARGETS.callsPerSecAt8)}`,
          ]),
        ['MCP full, 32 in flight', Math.round(c.mcp32.callsPerSec), c.mcp32.ok, c.mcp32.failed, '', ''],
      ],
    ),
  );
  lines.push(`(server limits raised for the bench: pluginMaxConcurrency 64 instead of 5, MCP session rate unbounded)`);
  lines.push('');
  const at = br.attribution;
  if (at) {
    const base = at.variants.none;
    const span = at.extensionRoundTripSeenByServer as Summary | null;
    lines.push(
      table(
        ['where the time goes (bench_echo, REST)', 'p50 ms', 'calls/s @8', 'vs as shipped'],
        [
          ['as shipped', ms(base.restP50), Math.round(base.callsPerSecAt8), ''],
          ...Object.entries(at.variants as Record<string, any>)
            .filter(([k]) => k !== 'none')
            .map(([k, v]) => [`  ${k}`, ms(v.restP50), Math.round(v.callsPerSecAt8), `${(v.restP50 - base.restP50 >= 0 ? '+' : '')}${(v.restP50 - base.restP50).toFixed(3)} ms, ${((v.callsPerSecAt8 / base.callsPerSecAt8 - 1) * 100).toFixed(0)}% calls/s`]),
          ['server → extension → page → server (hub.dispatch)', span ? ms(span.p50) : 'n/a', '', span ? `${ms(base.restP50 - span.p50)} ms outside the extension` : ''],
          ['floor (no product logic)', ms((br.floor.extensionRoundTrip as Summary).p50), '', ''],
        ],
      ),
    );
    lines.push('');
  }
  const brow: (string | number)[][] = [];
  for (const [name, b] of Object.entries(br.builtins as Record<string, any>)) {
    if (b.skipped) brow.push([name, '', '', '', `skipped: ${b.skipped}`]);
    else if (b.error) brow.push([name, '', '', '', `error: ${String(b.error).slice(0, 100)}`]);
    else brow.push([name, ms(b.p50), ms(b.p99), b.n, name === 'browser_list_tabs' ? `p50≤${TARGETS.listTabsP50Ms}: ${tgt(b.p50 <= TARGETS.listTabsP50Ms)}` : '']);
  }
  lines.push(table(['built-in tool (REST)', 'p50', 'p99', 'n', 'note'], brow));
  lines.push('');
  const srows: (string | number)[][] = [];
  for (const s of st.startup) {
    srows.push([`${s.fromSource ? '  same, from source (OPENTABS_NO_BUNDLE=1)' : `start, ${s.plugins} plugins (${s.tools} plugin tools), ${s.runs} runs`}`, ms(s.toHealthMs.p50), ms(s.toHealthMs.max), ms(s.toToolsLoadedMs.p50), s.plugins === 100 && !s.fromSource ? `≤${TARGETS.startupMs2000} ms: ${tgt(s.toToolsLoadedMs.p50 <= TARGETS.startupMs2000)}` : '']);
  }
  const bareS = st.bareBunServeMs as Summary;
  srows.unshift(['floor: bare Bun.serve script', ms(bareS.p50), ms(bareS.max), '', '']);
  lines.push(table(['start-up: spawn → (ms)', '/health p50', '/health max', 'all tools p50', 'target'], srows));
  const tl = st.toolsList2000 as any;
  if (tl) lines.push(`tools/list at ${tl.tools} tools: p50 ${ms(tl.latency.p50)} ms with the SDK client (raw HTTP: p50 ${tl.serverLatency ? ms(tl.serverLatency.p50) : 'n/a'} ms, target ≤5), ${tl.bytes} bytes (${Math.round(tl.bytesPerTool)} B/tool); /reload: p50 ${ms((st.reload2000 as any).wall.p50)} ms wall, server-reported ${ms((st.reload2000 as any).reportedMs)} ms`);
  lines.push('');
  const r = br.memory.rss;
  const g = br.memory.afterGc as Record<string, { rss: number; heapUsed: number }>;
  const gcCell = (k: string) => (g[k] ? `after GC: RSS ${mb(g[k]!.rss)}, heap ${mb(g[k]!.heapUsed)}` : '');
  // Flat: after a full GC, neither batch of sessions leaves RSS more than the allowance above where it was before them.
  const growth = (Math.max(g.after1000Sessions!.rss, g.after2000Sessions!.rss) - g.beforeSessions!.rss) / 1024 / 1024;
  lines.push(
    table(
      ['server RSS (MB)', 'value', 'target'],
      [
        ['idle, CLI start, 0 plugins, no browser', mb(st.rssIdle0 as number), `≤${TARGETS.idleRssMb}: ${tgt((st.rssIdle0 as number) / 1024 / 1024 <= TARGETS.idleRssMb)}`],
        ['idle, CLI start, 2,000 tools', mb(st.rssIdle100 as number), ''],
        ['e2e server idle, extension connected', mb(r.idleExtensionConnected), `≤${TARGETS.idleRssMb}: ${tgt(r.idleExtensionConnected / 1024 / 1024 <= TARGETS.idleRssMb)} (anon ${br.memory.split.idle.anon}, file ${br.memory.split.idle.file})`],
        [`  same, ${(MEMORY_RELEASE_IDLE_MS + 2000) / 1000} s idle (after the quiet-spell release)`, mb(r.idleExtensionReleased), `≤${TARGETS.idleRssMb}: ${tgt(r.idleExtensionReleased / 1024 / 1024 <= TARGETS.idleRssMb)}`],
        [`after ${br.memory.callsA} calls`, mb(r.after10kCalls), gcCell('callsA')],
        [`after ${br.memory.callsB} calls`, mb(r.afterMoreCalls), gcCell('callsB')],
        [`after ${br.memory.callsC} calls`, mb(r.afterEvenMoreCalls), gcCell('callsC')],
        [`before the MCP sessions`, mb(r.beforeSessions), gcCell('beforeSessions')],
        [`after ${br.memory.sessionsPerBatch} MCP sessions opened+closed`, mb(r.after1000Sessions), gcCell('after1000Sessions')],
        [`after ${br.memory.sessionsPerBatch * 2} MCP sessions`, mb(r.after2000Sessions), gcCell('after2000Sessions')],
        [`then ${(MEMORY_RELEASE_IDLE_MS + 2000) / 1000} s without a request (after the quiet-spell release)`, mb(r.afterQuietSpell), `≤60, within 5 of idle (${mb(r.idleExtensionConnected)}): ${tgt(r.afterQuietSpell / 1024 / 1024 <= 60 && (r.afterQuietSpell - r.idleExtensionConnected) / 1024 / 1024 <= 5)} (anon ${br.memory.split.quiet.anon}, file ${br.memory.split.quiet.file})`],
        [`  flat after the sessions? (GC'd RSS ≤ before +${TARGETS.sessionsRssGrowthMb} MB)`, `${growth >= 0 ? '+' : ''}${growth.toFixed(1)}`, `${tgt(growth <= TARGETS.sessionsRssGrowthMb)}; ${br.memory.sessionsFailed} sessions failed; MCP clients left: ${br.memory.mcpClientsAfter}`],
      ],
    ),
  );
  lines.push('');
  const ctx = br.context;
  const per2000 = tl ? tl.bytesPerTool : NaN;
  lines.push(
    table(
      ['context cost', 'bytes', '≈tokens', 'target'],
      [
        [`tools/list full, ${ctx.toolsList.tools} tools (built-ins + testapp + bench)`, ctx.toolsList.bytes, Math.round(ctx.toolsList.bytes / 4), `${Math.round(ctx.toolsList.bytesPerTool)} B/tool ≤${TARGETS.toolsListBytesPerTool}: ${tgt(ctx.toolsList.bytesPerTool <= TARGETS.toolsListBytesPerTool)}`],
        [`tools/list full, ${tl?.tools ?? '?'} tools (synthetic)`, tl?.bytes ?? 'n/a', tl ? Math.round(tl.bytes / 4) : 'n/a', `${Math.round(per2000)} B/tool ≤${TARGETS.toolsListBytesPerTool}: ${tgt(per2000 <= TARGETS.toolsListBytesPerTool)}`],
        ['tools/list gateway', ctx.gatewayListBytes, Math.round(ctx.gatewayListBytes / 4), `≤${TARGETS.gatewayListBytes}: ${tgt(ctx.gatewayListBytes <= TARGETS.gatewayListBytes)}`],
        [`gateway opentabs_list_tools without arguments (${ctx.toolsList.tools} tools, one line each)`, ctx.gatewayIndexBytes, Math.round(ctx.gatewayIndexBytes / 4), ''],
        ...Object.entries(ctx.reading as Record<string, Record<string, number>>).flatMap(([label, row]) =>
          Object.entries(row).map(([k, v]) => [`${label}: ${k}`, v, Math.round(v / 4), k === 'pageHtmlBytes' ? '' : `${((v / row.pageHtmlBytes!) * 100).toFixed(0)}% of page HTML`]),
        ),
      ],
    ),
  );
  return lines.join('\n');
}

async function main(): Promise<void> {
  const m = machine();
  log(`machine: ${JSON.stringify(m)}`);
  const base = mkdtempSync(join(tmpdir(), 'opentabs-e2e-bench-'));
  cleanups.push(() => rmSync(base, { recursive: true, force: true }));
  const t0 = performance.now();
  log('start-up …');
  const st = await benchStartup(base);
  const { results: br, srv } = await benchBrowser(base);
  // Stop the server cleanly (SIGTERM) so a requested CPU profile gets written.
  await srv.stop();
  await cleanup();
  const text = report(m, st, br);
  console.log(text);
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `e2e-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify({ machine: m, quick: QUICK, targets: TARGETS, iterations: N, startup: st, ...br, totalSeconds: (performance.now() - t0) / 1000 }, null, 2));
  console.log(`\nwrote ${file} (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
}

// Clean up on Ctrl-C too: Chromium, the server child and temp dirs are ours to remove.
process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
try {
  await main();
  process.exit(0);
} catch (e) {
  console.error(`bench failed: ${(e as Error).stack ?? e}`);
  await cleanup();
  process.exit(1);
}
