/**
 * What an agent changes on the user's tab beyond a call — browser_emulate's overrides,
 * browser_intercept_requests' mocked answers, browser_force_pseudo_state's forced states — ended
 * only on reset or when the extension lost the server: a user who closed the agent's client kept
 * a tab with a fake user agent, mocked answers and a forced :hover. They now end when the MCP
 * session that made them ends, unless another live session (or a call of no session, REST) made
 * changes of that kind to the same tab. Performed as agents would, with official SDK clients; the
 * page's view is read with Playwright.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { connectMcp } from '../harness/fake-extension.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let one: Page;
let two: Page;
let tabOne = 0;
let tabTwo = 0;
let ownUa = '';
let ownWidth = 0;
const clients: Client[] = [];

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto', tools: { browser_intercept_requests: 'auto', browser_enable_network_capture: 'auto' } } },
    // Six agents' sessions in a minute: over the default limit of new sessions.
    server: { limits: { mcpSessionRate: { max: 100, windowMs: 60_000 } } },
    routes: (req) => (new URL(req.url).pathname === '/s18b/api/balance' ? Response.json({ balance: 'real' }) : undefined),
  });
  one = await h.context.newPage();
  await one.goto(h.fixtureUrl('/pages/input-page.html'));
  tabOne = await h.tabIdOf(one);
  two = await h.context.newPage();
  await two.goto(h.fixtureUrl('/pages/index.html'));
  tabTwo = await h.tabIdOf(two);
  ownUa = await ua(one);
  ownWidth = await width(two);
}, 120_000);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await h?.stop();
});

const ua = (p: Page) => p.evaluate(() => navigator.userAgent);
const width = (p: Page) => p.evaluate(() => window.innerWidth);
const balance = () => one.evaluate(async () => ((await (await fetch('/s18b/api/balance')).json()) as { balance: string }).balance);
const color = () => one.evaluate(() => getComputedStyle(document.getElementById('pseudo')!).color);

async function agent(): Promise<Client> {
  const c = await connectMcp(h.url, h.srv.secret);
  clients.push(c);
  return c;
}

async function call(c: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const r = (await c.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: unknown; content: { text?: string }[] };
  if (r.isError) throw new Error(`${name}: ${r.content[0]?.text}`);
  return r.structuredContent ?? JSON.parse(r.content[0]!.text!);
}

/** The client closes its session (DELETE /mcp), as an MCP client does when the user quits it. */
async function quit(c: Client): Promise<void> {
  await (c.transport as StreamableHTTPClientTransport).terminateSession();
  await c.close();
}

describe("an agent's changes to the user's tab end with its MCP session", () => {
  test('closing the session ends its emulation, mocked answers and forced :hover', async () => {
    const a = await agent();
    await call(a, 'browser_emulate', { tabId: tabOne, userAgent: 'AgentUA/18b' });
    await call(a, 'browser_intercept_requests', { tabId: tabOne, rules: [{ urlPattern: '*/s18b/api/*', action: 'fulfill', body: '{"balance":"fake"}' }] });
    await call(a, 'browser_force_pseudo_state', { tabId: tabOne, selector: '#pseudo', states: ['hover'] });
    expect(await ua(one)).toBe('AgentUA/18b');
    expect(await balance()).toBe('fake');
    await waitUntil(async () => (await color()) === 'rgb(255, 0, 0)' || null, 'the forced :hover colour');

    await quit(a);
    await waitUntil(async () => (await ua(one)) === ownUa || null, 'the user agent back');
    await waitUntil(async () => (await balance()) === 'real' || null, 'the real answers back');
    await waitUntil(async () => (await color()) === 'rgb(0, 0, 255)' || null, 'the forced :hover to end');

    // The next call on the tab (another agent's) is told why.
    const b = await agent();
    try {
      const r = await call(b, 'browser_emulate', { tabId: tabOne, reset: true });
      expect(r.note).toContain('MCP session that set it ended');
      const i = await call(b, 'browser_intercept_requests', { tabId: tabOne });
      expect(i.intercepting).toBe(false);
      expect(i.note).toContain('MCP session that set its rules ended');
    } finally {
      await quit(b);
    }
  });

  test('a call still running when its session ends: what it sets after the end is undone too', async () => {
    // Network capture holds the tab's debugger session: an override left behind would hold as long.
    expect((await h.callTool('browser_enable_network_capture', { tabId: tabTwo })).status).toBe(200);
    const worker = await h.serviceWorker();
    try {
      // In the worker: the call's user agent command waits until the test lets it go.
      await worker.evaluate((tabId) => {
        const g = globalThis as Record<string, unknown>;
        const dbg = chrome.debugger as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
        const original = dbg.sendCommand!;
        let release!: () => void;
        const gate = new Promise<void>((r) => (release = r));
        g.__s18b = { reached: false, done: false, release };
        dbg.sendCommand = async function (...args: unknown[]) {
          const [target, method, params] = args as [{ tabId?: number }, string, { userAgent?: string }];
          if (target?.tabId === tabId && method === 'Emulation.setUserAgentOverride' && params?.userAgent === 'Race/1') {
            dbg.sendCommand = original;
            (g.__s18b as { reached: boolean }).reached = true;
            await gate;
            const r = await original.apply(chrome.debugger, args);
            (g.__s18b as { done: boolean }).done = true;
            return r;
          }
          return original.apply(chrome.debugger, args);
        };
      }, tabTwo);
      const state = () => worker.evaluate(() => (globalThis as unknown as { __s18b: { reached: boolean; done: boolean } }).__s18b);
      const a = await agent();
      const pending = a.callTool({ name: 'browser_emulate', arguments: { tabId: tabTwo, viewport: { width: 520, height: 400 }, userAgent: 'Race/1' } }).catch(() => null);
      await waitUntil(async () => (await state()).reached || null, 'the call at its user agent');
      expect(await width(two)).toBe(520);
      await quit(a);
      await waitUntil(async () => (await width(two)) === ownWidth || null, 'the viewport back at the session end');
      await worker.evaluate(() => (globalThis as unknown as { __s18b: { release: () => void } }).__s18b.release());
      await waitUntil(async () => (await state()).done || null, 'the late user agent command sent');
      await pending;
      await waitUntil(async () => (await ua(two)) === ownUa || null, 'the late user agent undone');
    } finally {
      await h.callTool('browser_disable_network_capture', { tabId: tabTwo });
    }
  });

  test("another live session's change stays; a REST call's stays until reset", async () => {
    const a = await agent();
    const b = await agent();
    // Tab one: A's only. Tab two: A's user agent and B's viewport.
    await call(a, 'browser_emulate', { tabId: tabOne, userAgent: 'OnlyA/1' });
    await call(a, 'browser_emulate', { tabId: tabTwo, userAgent: 'AlsoA/1' });
    await call(b, 'browser_emulate', { tabId: tabTwo, viewport: { width: 480, height: 400 } });
    expect(await ua(one)).toBe('OnlyA/1');
    expect(await width(two)).toBe(480);

    await quit(a);
    // Once tab one is back, the extension has handled the session's end for every tab.
    await waitUntil(async () => (await ua(one)) === ownUa || null, "tab one's user agent back");
    expect(await width(two)).toBe(480);
    expect(await ua(two)).toBe('AlsoA/1');

    await quit(b);
    await waitUntil(async () => (await width(two)) === ownWidth || null, "tab two's viewport back");
    expect(await ua(two)).toBe(ownUa);

    // A call of no session (REST) on tab one, then a session's on it: the session's end leaves it.
    expect((await h.callTool('browser_emulate', { tabId: tabOne, userAgent: 'Rest/1' })).status).toBe(200);
    const c = await agent();
    const d = await agent();
    await call(c, 'browser_emulate', { tabId: tabOne, viewport: { width: 500, height: 400 } });
    await call(d, 'browser_emulate', { tabId: tabTwo, userAgent: 'OnlyD/1' });
    await quit(c);
    await quit(d);
    await waitUntil(async () => (await ua(two)) === ownUa || null, "tab two's user agent back after D's end");
    expect(await ua(one)).toBe('Rest/1');
    expect(await width(one)).toBe(500);
    expect((await h.callTool('browser_emulate', { tabId: tabOne, reset: true })).status).toBe(200);
    expect(await ua(one)).toBe(ownUa);
  });
});
