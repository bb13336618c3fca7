/**
 * A hostile page floods the page-tools channel, in real Chromium with the real extension: it
 * dispatches the channel's events itself, as fast as it can. Forged results (3 MB each, for calls
 * that do not exist) never reach the service worker; tool lists of 32 large schemas reach it at
 * most PAGE_TOOLS_UPDATES_BURST + PAGE_TOOLS_UPDATES_PER_SECOND a second and
 * PAGE_TOOLS_LIST_BYTES_BURST + PAGE_TOOLS_LIST_BYTES_PER_SECOND bytes a second (latest list
 * last), and page tools in another tab and the built-in tools still answer. Counted by a listener
 * on the worker's page-tools Ports: messages and bytes that arrived, per tab. Many tabs changing
 * their lists at once: the worker checks at most PAGE_TOOLS_LISTS_ALL_TABS_BURST +
 * PAGE_TOOLS_LISTS_ALL_TABS_PER_SECOND lists a second from all of them (counted as the updates the
 * server gets), each tab's latest list last.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { PAGE_TOOLS_LISTS_ALL_TABS_BURST, PAGE_TOOLS_LISTS_ALL_TABS_PER_SECOND, PAGE_TOOLS_LIST_BYTES_BURST, PAGE_TOOLS_LIST_BYTES_PER_SECOND, PAGE_TOOLS_UPDATES_BURST, PAGE_TOOLS_UPDATES_PER_SECOND } from '../../server/protocol/limits.ts';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(240_000);
let h: BrowserHarness;
let goodTab = 0;

interface Seen {
  tools: number;
  results: number;
  bytes: number;
  last: string;
}

beforeAll(async () => {
  h = await startBrowserHarness();
  await h.srv.ctx.config.setOriginPermission(new URL(h.fixtureBase).origin, 'auto');
  const w = await h.serviceWorker();
  await w.evaluate(() => {
    const seen: Record<number, Seen> = {};
    (globalThis as unknown as { __floodSeen: typeof seen }).__floodSeen = seen;
    chrome.runtime.onConnect.addListener((p) => {
      if (p.name !== 'opentabs-page-tools' || p.sender?.tab?.id === undefined) return;
      const id = p.sender.tab.id;
      p.onMessage.addListener((m: { type?: string; tools?: { name: string }[] }) => {
        const s = (seen[id] ??= { tools: 0, results: 0, bytes: 0, last: '' });
        if (m?.type === 'tools') {
          s.tools++;
          s.last = m.tools?.[0]?.name ?? '';
        } else s.results++;
        s.bytes += JSON.stringify(m).length;
      });
    });
  });
  const good = await h.context.newPage();
  await good.goto(h.fixtureUrl('/pages/page-tools-shim.html?good'));
  goodTab = await h.tabIdOf(good);
  await waitUntil(() => h.srv.ctx.catalog.current().get(`tab${goodTab}_createTodo`), 'the good page tool listed', 30_000);
}, 90_000);

afterAll(async () => {
  await h?.stop();
});

const seenOf = async (tabId: number): Promise<Seen> =>
  (await (await h.serviceWorker()).evaluate((id) => (globalThis as unknown as { __floodSeen: Record<number, Seen> }).__floodSeen[id] ?? { tools: 0, results: 0, bytes: 0, last: '' }, tabId));

/** The other tab's page tool and a built-in tool both answer. */
async function othersStillWork(marker: string): Promise<void> {
  const r = await h.callTool(`tab${goodTab}_createTodo`, { title: marker });
  expect(JSON.stringify(r.body)).toContain(marker);
  const tabs = await h.callTool('browser_list_tabs');
  expect(tabs.status).toBe(200);
  expect(JSON.stringify(tabs.body)).toContain('page-tools-shim.html?good');
}

test('forged results for calls that do not exist never reach the worker', async () => {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/page-tools-shim.html?forged-results'));
  const tabId = await h.tabIdOf(page);
  await waitUntil(() => h.srv.ctx.catalog.current().get(`tab${tabId}_createTodo`), 'the hostile page listed', 30_000);
  const sent = await page.evaluate(async () => {
    const big = 'x'.repeat(3_000_000);
    let n = 0;
    for (let i = 0; i < 60; i++) {
      const detail = JSON.stringify({ type: 'result', id: `forged-${i}`, ok: true, value: { content: [{ type: 'text', text: big }] } });
      document.dispatchEvent(new CustomEvent('opentabs:page-tools-to-bridge', { detail }));
      n++;
      await new Promise((done) => setTimeout(done, 0));
    }
    return n;
  });
  expect(sent).toBe(60);
  // A real call on the same page after the flood: its result is the first the worker got.
  const own = await h.callTool(`tab${tabId}_createTodo`, { title: 'real' });
  expect(JSON.stringify(own.body)).toContain('real');
  expect((await seenOf(tabId)).results).toBe(1);
  await othersStillWork('after-forged-results');
  await page.close();
});

test('a flood of large tool lists reaches the worker at the bridge rate, latest list last', async () => {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/page-tools-shim.html?forged-lists'));
  const tabId = await h.tabIdOf(page);
  await waitUntil(() => h.srv.ctx.catalog.current().get(`tab${tabId}_createTodo`), 'the hostile page listed', 30_000);
  const before = await seenOf(tabId);
  const started = Date.now();
  const ROUNDS = 300;
  await page.evaluate(async (rounds) => {
    // 32 tools of about 15 KB of schema each: one list is about 500 KB of JSON.
    const props: string[] = [];
    for (let i = 0; i < 300; i++) props.push(`"p${i}_SALT":{"type":"string","minLength":1}`);
    const schema = `{"type":"object","properties":{${props.join(',')}}}`;
    for (let r = 0; r < rounds; r++) {
      const tools = Array.from({ length: 32 }, (_, i) => `{"name":"r${r}_t${i}","description":"d","inputSchema":${schema.replaceAll('SALT', `${r}_${i}`)}}`);
      document.dispatchEvent(new CustomEvent('opentabs:page-tools-to-bridge', { detail: `{"type":"tools","tools":[${tools.join(',')}]}` }));
      await new Promise((done) => setTimeout(done, 0));
    }
  }, ROUNDS);
  // The latest list arrives (held back, not lost).
  await waitUntil(async () => (await seenOf(tabId)).last === `r${ROUNDS - 1}_t0`, 'the last list in the worker', 60_000);
  const seconds = (Date.now() - started) / 1000;
  const s = await seenOf(tabId);
  const lists = s.tools - before.tools;
  const bytes = s.bytes - before.bytes;
  console.log(`${ROUNDS} lists sent in ${seconds.toFixed(1)} s; the worker got ${lists} lists, ${(bytes / 1e6).toFixed(1)} MB`);
  // Upper bounds from the budgets over the time it took (slower machines only allow more).
  expect(lists).toBeLessThanOrEqual(PAGE_TOOLS_UPDATES_BURST + Math.ceil(seconds * PAGE_TOOLS_UPDATES_PER_SECOND) + 1);
  expect(bytes).toBeLessThanOrEqual(PAGE_TOOLS_LIST_BYTES_BURST + seconds * PAGE_TOOLS_LIST_BYTES_PER_SECOND + 600_000);
  expect(lists).toBeLessThan(ROUNDS / 2);
  await othersStillWork('after-forged-lists');
  await page.close();
});

test('many tabs changing their lists at once: the worker checks them at the all-tabs rate, latest list per tab last', async () => {
  const TABS = 12;
  const ROUNDS = 30;
  const pages = [];
  const tabIds: number[] = [];
  for (let i = 0; i < TABS; i++) {
    const p = await h.context.newPage();
    await p.goto(h.fixtureUrl(`/pages/page-tools-shim.html?many-${i}`));
    pages.push(p);
    tabIds.push(await h.tabIdOf(p));
  }
  for (const id of tabIds) await waitUntil(() => h.srv.ctx.catalog.current().get(`tab${id}_createTodo`), 'every page listed', 30_000);
  const updates = new Map<number, number>();
  const registry = h.srv.ctx.catalog.pageTools;
  const update = registry.update.bind(registry);
  registry.update = (tabId, url, tools) => {
    updates.set(tabId, (updates.get(tabId) ?? 0) + 1);
    return update(tabId, url, tools);
  };
  const started = Date.now();
  await Promise.all(
    pages.map((p) =>
      p.evaluate(async (rounds) => {
        for (let r = 0; r < rounds; r++) {
          document.dispatchEvent(new CustomEvent('opentabs:page-tools-to-bridge', { detail: JSON.stringify({ type: 'tools', tools: [{ name: `round${r}`, description: 'd', inputSchema: { type: 'object' } }] }) }));
          await new Promise((done) => setTimeout(done, 0));
        }
      }, ROUNDS),
    ),
  );
  await waitUntil(() => tabIds.every((id) => h.srv.ctx.catalog.current().get(`tab${id}_round${ROUNDS - 1}`)), 'every tab\'s last list listed', 60_000);
  const seconds = (Date.now() - started) / 1000;
  registry.update = update;
  const total = [...updates.values()].reduce((a, b) => a + b, 0);
  console.log(`${TABS} tabs × ${ROUNDS} lists in ${seconds.toFixed(1)} s: the server got ${total} updates`);
  expect(total).toBeLessThanOrEqual(PAGE_TOOLS_LISTS_ALL_TABS_BURST + Math.ceil(seconds * PAGE_TOOLS_LISTS_ALL_TABS_PER_SECOND));
  await othersStillWork('after-many-tabs');
  for (const p of pages) await p.close();
});
