/**
 * The end-to-end harness: the real server (port 0, temp config dir, extension installed into
 * <configDir>/extension), real headless Chromium with that installed extension loaded, and the
 * static fixture pages (test/fixtures/pages) served on 127.0.0.1. Resolves once the extension's
 * WebSocket is up (`extensionConnected` in /health).
 *
 *   const h = await startBrowserHarness({ localPlugins: [dir], permissions: { fixture: { default: 'auto' } } });
 *   try {
 *     const page = await h.context.newPage();
 *     await page.goto(h.fixtureUrl('/pages/index.html'));
 *     const r = await h.callTool('browser_list_tabs');   // REST: { status, body }
 *   } finally { await h.stop(); }
 *
 * stop() closes Chromium, the server and the fixture server and removes every temp dir, each step
 * even when an earlier one failed.
 */
import { afterAll, beforeAll, beforeEach } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, normalize, resolve } from 'node:path';
import { chromium, type BrowserContext, type Page, type Worker } from 'playwright-core';
import type { ServerOptions } from '../../server/context.ts';
import { ensureExtensionBuilt } from '../../extension/build.ts';
import { startTestServer, type TestServer } from './server.ts';

export const CHROMIUM = process.env.OPENTABS_CHROMIUM ?? '/usr/bin/chromium';
const PAGES_DIR = resolve(import.meta.dir, '../fixtures/pages');
const MIME: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json', '.png': 'image/png', '.svg': 'image/svg+xml' };

export interface BrowserHarnessOptions {
  /** Plugin folders for config.json localPlugins. */
  localPlugins?: string[];
  /** config.json permissions, e.g. { fixture: { default: 'auto' } }. */
  permissions?: Record<string, unknown>;
  pluginSettings?: Record<string, Record<string, unknown>>;
  /** Any other server options (limits, dev, skipPermissions …). */
  server?: Partial<ServerOptions>;
  /** Extra fixture routes tried before the static pages; return undefined to fall through. */
  routes?: (req: Request) => Response | Promise<Response> | undefined;
  /** How long to wait for the extension to connect. */
  connectTimeoutMs?: number;
  /** Folders of other unpacked extensions loaded beside OpenTabs (as a user's password manager would be). */
  extraExtensions?: string[];
}

export interface ToolCallResult {
  status: number;
  body: any;
}

export interface BrowserHarness {
  srv: TestServer;
  readonly url: string;
  configDir: string;
  context: BrowserContext;
  extensionId: string;
  /** The extension's service worker (re-read with serviceWorker() after a worker restart). */
  worker: Worker;
  serviceWorker(): Promise<Worker>;
  /** Base URL of the fixture server, e.g. http://127.0.0.1:41234 */
  fixtureBase: string;
  fixtureUrl(path: string): string;
  /** POST /tools/:name/call with the bearer secret. */
  callTool(name: string, args?: Record<string, unknown>, opts?: { tabId?: number; signal?: AbortSignal }): Promise<ToolCallResult>;
  /** Authenticated GET /health (null when the server is not answering). */
  health(): Promise<any>;
  waitForHealth(pred: (h: any) => boolean, what: string, timeoutMs?: number): Promise<any>;
  /** Chrome's tab id of a page (matched by its exact URL through browser_list_tabs). */
  tabIdOf(page: Page): Promise<number>;
  /**
   * The real side panel (not sidepanel.html in a tab, which the extension refuses as a panel),
   * opened in the window of a new tab; the same Page on later calls while it is open.
   */
  openSidePanel(): Promise<Page>;
  /** Stop the server and start a new one on the same port and config dir. */
  restartServer(): Promise<void>;
  stopServer(): Promise<void>;
  startServer(): Promise<void>;
  stop(): Promise<void>;
}

/** Poll `fn` until it returns a truthy value; bounded, with a message naming what was awaited. */
export async function waitUntil<T>(fn: () => T | Promise<T>, what: string, timeoutMs = 15_000, everyMs = 100): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (let i = 0; ; i++) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Turn file:// pages on as the user would (config.json allowFileUrls, then a sync to the
 * extension) and wait until the extension opens `plainFileUrl`, an ordinary file:// page.
 */
export async function allowFileUrls(h: BrowserHarness, plainFileUrl: string): Promise<void> {
  await h.srv.ctx.config.update((d) => {
    d.allowFileUrls = true;
  });
  h.srv.ctx.hub.sendSyncFull();
  await waitUntil(async () => {
    const r = await h.callTool('browser_open_tab', { url: plainFileUrl, active: false });
    if (r.status !== 200) return null;
    await h.callTool('browser_close_tab', { tabId: r.body.result.id });
    return true;
  }, 'file:// pages allowed');
}

/**
 * Whether the extension holds a debugger session on the tab: a second attach by the extension is
 * refused then. (getTargets' `attached` would also count Playwright's own session.)
 */
export async function extensionHoldsDebugger(h: BrowserHarness, tabId: number): Promise<boolean> {
  return (await h.serviceWorker()).evaluate(async (id) => {
    try {
      await chrome.debugger.attach({ tabId: id }, '1.3');
    } catch (err) {
      if (/already attached/i.test((err as Error).message)) return true;
      throw err;
    }
    await chrome.debugger.detach({ tabId: id });
    return false;
  }, tabId);
}

/** Chrome APIs navigateOnFirstUse can wrap (each takes the tab as `{ tabId }` or its target first). */
export type WrappedChromeApi = 'debugger.sendCommand' | 'webNavigation.getFrame' | 'webNavigation.getAllFrames';

/**
 * In the extension's worker: the first `api` call for the tab (of DevTools `method`, if given)
 * first navigates the tab to `url` and waits (bounded) until that page has loaded, then goes on as
 * usual. Makes a navigation commit exactly between two steps of a tool, for race tests.
 */
export async function navigateOnFirstUse(h: BrowserHarness, api: WrappedChromeApi, tabId: number, url: string, method?: string): Promise<void> {
  const worker = await h.serviceWorker();
  await worker.evaluate(
    ({ api, tabId, url, method }) => {
      const [ns, fn] = api.split('.') as [string, string];
      const holder = (chrome as unknown as Record<string, Record<string, (...a: unknown[]) => Promise<unknown>>>)[ns]!;
      const original = holder[fn]!;
      let armed = true;
      const committed = () =>
        new Promise<void>((resolve, reject) => {
          const done = (err?: Error) => {
            clearTimeout(timer);
            chrome.webNavigation.onCompleted.removeListener(listener);
            if (err) reject(err);
            else resolve();
          };
          const listener = (d: { tabId: number; frameId: number; url: string }) => {
            if (d.tabId === tabId && d.frameId === 0 && d.url === url) done();
          };
          const timer = setTimeout(() => done(new Error('the page did not load')), 10_000);
          chrome.webNavigation.onCompleted.addListener(listener);
        });
      // Calls for the tab made while the navigation runs (a click's press and release, sent with
      // its move) wait for it too, and then go in the order they were made.
      let gate: Promise<unknown> | null = null;
      holder[fn] = async function (...args: unknown[]) {
        const forTab = (args[0] as { tabId?: number } | undefined)?.tabId === tabId;
        if (forTab && armed && (method === undefined || args[1] === method)) {
          armed = false;
          gate = (async () => {
            const load = committed();
            await chrome.tabs.update(tabId, { url });
            await load;
          })();
          await gate;
          holder[fn] = original;
        } else if (forTab && gate) {
          await gate;
        }
        return original.apply(holder, args);
      };
    },
    { api, tabId, url, method },
  );
}

/** The tool call was refused because of the page (403 page_not_allowed), with a message matching `message`. */
export function expectPageRefused(r: ToolCallResult, what: string, message: RegExp): void {
  if (r.status !== 403 || r.body?.error?.code !== 'page_not_allowed') throw new Error(`${what}: expected 403 page_not_allowed, got ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  if (!message.test(String(r.body.error.message))) throw new Error(`${what}: refusal message ${JSON.stringify(r.body.error.message)} does not match ${message}`);
}

function serveFixtures(routes?: BrowserHarnessOptions['routes']) {
  return Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const extra = routes ? await routes(req) : undefined;
      if (extra) return extra;
      const { pathname } = new URL(req.url);
      if (pathname === '/' || pathname === '/favicon.ico') return new Response(pathname === '/' ? 'fixture server' : '', { status: pathname === '/' ? 200 : 404 });
      if (!pathname.startsWith('/pages/')) return new Response('not found', { status: 404 });
      const file = normalize(join(PAGES_DIR, decodeURIComponent(pathname.slice('/pages/'.length))));
      if (!file.startsWith(PAGES_DIR)) return new Response('forbidden', { status: 403 });
      // /pages/plugin-app-anything.html serves plugin-app.html unless that file exists: one
      // fixture page reachable at many URLs (for URL-pattern tests). Drop "-segments" until a file exists.
      let path = file;
      for (let i = 0; i < 10 && !existsSync(path); i++) {
        const shorter = path.replace(/-[a-z0-9]+\.html$/, '.html');
        if (shorter === path) break;
        path = shorter;
      }
      if (!existsSync(path)) return new Response('not found', { status: 404 });
      return new Response(readFileSync(path), { headers: { 'content-type': MIME[extname(path)] ?? 'application/octet-stream', 'cache-control': 'no-store' } });
    },
  });
}

/**
 * Open the extension's side panel the way a user does, and return it as a Playwright Page.
 *
 * chrome.sidePanel.open needs a user gesture: a page of ours opened by the test calls it from
 * page.evaluate, which Playwright runs as a user gesture. The panel is a page target that is not
 * a tab, so Playwright's auto-attach (tabs only) never reports it; attaching it through
 * Playwright's own browser session (Target.attachToTarget, flatten) makes Playwright create a Page
 * for it like for any other page.
 */
export async function openRealSidePanel(context: BrowserContext, extensionId: string): Promise<Page> {
  // Rarely Playwright never makes a Page for the panel's target; a panel opened in a new window
  // (a new target) then works. Bounded: three tries.
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await openSidePanelOnce(context, extensionId, attempt > 0);
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError;
}

async function openSidePanelOnce(context: BrowserContext, extensionId: string, newWindow: boolean): Promise<Page> {
  const panelUrl = `chrome-extension://${extensionId}/sidepanel.html`;
  const browser = context.browser();
  if (!browser) throw new Error('openSidePanel: the context has no browser to query targets with');
  const cdp = await browser.newBrowserCDPSession();
  type TargetInfo = { targetId: string; type: string; url: string; attached: boolean };
  const panelTargets = async () => ((await cdp.send('Target.getTargets' as never)) as { targetInfos: TargetInfo[] }).targetInfos.filter((t) => t.type === 'page' && t.url === panelUrl);
  // The opener is sidepanel.html in a tab: it shows a "use the toolbar icon" note and never connects.
  const opener = await context.newPage();
  try {
    await opener.goto(panelUrl);
    // Every panel-URL target but the opener's tab is a side panel: a new one, or one still open in
    // this window from an earlier call whose Page was closed (sidePanel.open then makes no new target).
    const openerSession = await context.newCDPSession(opener);
    const openerId = ((await openerSession.send('Target.getTargetInfo')) as { targetInfo: { targetId: string } }).targetInfo.targetId;
    await openerSession.detach().catch(() => {});
    const opened = await opener.evaluate(async (fresh) => {
      const w = fresh ? await chrome.windows.create({ url: 'about:blank', focused: true }) : await chrome.windows.getCurrent();
      await chrome.sidePanel.open({ windowId: w!.id! });
      return true;
    }, newWindow);
    if (!opened) throw new Error('chrome.sidePanel.open did not resolve');
    const target = await waitUntil(async () => (await panelTargets()).find((t) => t.targetId !== openerId), 'the side panel target', 15_000);
    // Playwright's browser-level session: its Target.attachedToTarget handler creates the Page.
    const impl = (context as unknown as { _connection?: { toImpl?: (x: unknown) => any } })._connection?.toImpl?.(context);
    const rootSession = impl?._browser?._session;
    if (!rootSession?.send) throw new Error('openSidePanel: this playwright-core version does not expose its browser session (see openRealSidePanel in test/harness/browser.ts)');
    // Playwright may create the panel's Page on its own before or after this attach, and its url()
    // can still be empty then; so find it by its CDP target id (no script needed), polling, bounded.
    const targetIdOf = async (p: Page): Promise<string | null> => {
      if (p === opener || p.isClosed()) return null;
      try {
        const session = await context.newCDPSession(p);
        try {
          return ((await session.send('Target.getTargetInfo')) as { targetInfo: { targetId: string } }).targetInfo.targetId;
        } finally {
          await session.detach().catch(() => {});
        }
      } catch {
        return null;
      }
    };
    await rootSession.send('Target.attachToTarget', { targetId: target.targetId, flatten: true }).catch(() => {});
    const panel = await waitUntil(
      async () => {
        for (const p of context.pages()) if ((await targetIdOf(p)) === target.targetId) return p;
        return undefined;
      },
      'Playwright to create a Page for the side panel',
      15_000,
      50,
    );
    await panel.waitForLoadState('domcontentloaded');
    // A real side panel is no tab.
    const inTab = await panel.evaluate(async () => (await chrome.tabs.getCurrent()) !== undefined);
    if (inTab) throw new Error('openSidePanel: attached to a tab, not to the side panel');
    // A user's pointer comes into the panel across its edge (from the toolbar icon or the page);
    // one first seen inside it counts as uncovered by a popup there (guarded controls wait again).
    await panel.mouse.move(1, 1);
    return panel;
  } finally {
    await opener.close().catch(() => {});
    await cdp.detach().catch(() => {});
  }
}

export async function startBrowserHarness(opts: BrowserHarnessOptions = {}): Promise<BrowserHarness> {
  const cleanups: (() => unknown)[] = [];
  const cleanup = async () => {
    for (const fn of cleanups.reverse()) {
      try {
        await fn();
      } catch {}
    }
    cleanups.length = 0;
  };
  try {
    await ensureExtensionBuilt();
    const configDir = mkdtempSync(join(tmpdir(), 'opentabs-e2e-'));
    cleanups.push(() => rmSync(configDir, { recursive: true, force: true }));
    mkdirSync(configDir, { recursive: true });
    writeFileSync(
      join(configDir, 'config.json'),
      JSON.stringify({ schemaVersion: 1, localPlugins: opts.localPlugins ?? [], permissions: opts.permissions ?? {}, pluginSettings: opts.pluginSettings ?? {} }),
    );

    const fixtures = serveFixtures(opts.routes);
    cleanups.push(() => fixtures.stop(true));
    const fixtureBase = `http://127.0.0.1:${fixtures.port}`;

    const serverOpts: Partial<ServerOptions> = { skipPermissions: false, ...opts.server, configDir, installExtension: true };
    let srv = await startTestServer(serverOpts);
    let srvStopped = false;
    cleanups.push(() => (srvStopped ? undefined : srv.stop()));
    const port = srv.port;
    const extDir = join(configDir, 'extension');
    if (!existsSync(join(extDir, 'manifest.json'))) throw new Error(`The server did not install the extension into ${extDir}`);

    const profile = mkdtempSync(join(tmpdir(), 'opentabs-chrome-'));
    cleanups.push(() => rmSync(profile, { recursive: true, force: true }));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        `--disable-extensions-except=${[extDir, ...(opts.extraExtensions ?? [])].join(',')}`,
        `--load-extension=${[extDir, ...(opts.extraExtensions ?? [])].join(',')}`,
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
    cleanups.push(() => context.close());

    const serviceWorker = async (): Promise<Worker> => {
      const existing = context.serviceWorkers().find((w) => w.url().startsWith('chrome-extension://'));
      return existing ?? (await context.waitForEvent('serviceworker', { timeout: 15_000 }));
    };
    const worker = await serviceWorker();
    const extensionId = new URL(worker.url()).host;

    const health = async () => {
      try {
        const r = await fetch(`${srv.url}/health`, { headers: srv.auth });
        return r.ok ? await r.json() : null;
      } catch {
        return null;
      }
    };
    const waitForHealth = (pred: (h: any) => boolean, what: string, timeoutMs = 20_000) => waitUntil(async () => {
      const h = await health();
      return h && pred(h) ? h : null;
    }, what, timeoutMs);

    await waitForHealth((h) => h.extensionConnected === true, 'the extension to connect', opts.connectTimeoutMs ?? 20_000);

    const callTool = async (name: string, args: Record<string, unknown> = {}, o: { tabId?: number; signal?: AbortSignal } = {}): Promise<ToolCallResult> => {
      const r = await fetch(`${srv.url}/tools/${encodeURIComponent(name)}/call`, {
        method: 'POST',
        headers: { ...srv.auth, 'content-type': 'application/json' },
        body: JSON.stringify(o.tabId === undefined ? { arguments: args } : { arguments: args, tabId: o.tabId }),
        signal: o.signal,
      });
      const text = await r.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {}
      return { status: r.status, body };
    };

    let sidePanel: Page | null = null;
    const h: BrowserHarness = {
      get srv() {
        return srv;
      },
      set srv(v) {
        srv = v;
      },
      get url() {
        return srv.url;
      },
      configDir,
      context,
      extensionId,
      worker,
      serviceWorker,
      fixtureBase,
      fixtureUrl: (path) => fixtureBase + (path.startsWith('/') ? path : `/${path}`),
      callTool,
      health,
      waitForHealth,
      async tabIdOf(page) {
        const url = page.url();
        const found = await waitUntil(async () => {
          const r = await callTool('browser_list_tabs');
          const tabs = (r.body?.result?.tabs ?? []) as { id: number; url: string }[];
          return tabs.find((t) => t.url === url);
        }, `a tab with url ${url}`);
        return found.id;
      },
      async openSidePanel() {
        if (sidePanel && !sidePanel.isClosed()) return sidePanel;
        sidePanel = await openRealSidePanel(context, extensionId);
        return sidePanel;
      },
      async stopServer() {
        if (srvStopped) return;
        srvStopped = true;
        await srv.stop();
      },
      async startServer() {
        srv = await startTestServer({ ...serverOpts, port });
        srvStopped = false;
      },
      async restartServer() {
        await h.stopServer();
        await h.startServer();
      },
      stop: cleanup,
    };
    return h;
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/** A tool call's result when it answered 200; otherwise an Error carrying the body (for calls a test expects to succeed). */
export function resultOf(r: ToolCallResult): any {
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  return r.body.result;
}

/**
 * A test file's browser: one harness with one tab on the fixture page at `path`, reloaded before
 * each test. `set` receives the harness, the page and its tab id once they exist.
 */
export function useFixtureTab(path: string, set: (t: { h: BrowserHarness; page: Page; tabId: number }) => void): void {
  let h: BrowserHarness | undefined;
  let page: Page | undefined;
  beforeAll(async () => {
    h = await startBrowserHarness({});
    page = await h.context.newPage();
    await page.goto(h.fixtureUrl(path));
    set({ h, page, tabId: await h.tabIdOf(page) });
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });
  beforeEach(async () => {
    await page!.reload();
  });
}
