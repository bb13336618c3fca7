/**
 * The user closes or navigates the tab the agent works on, during a call and just before one. In
 * real Chromium with the real extension: each call ends with an error naming what happened to the
 * tab (never a wait until its timeout, never a hang). And a PDF among the user's tabs: reading it
 * says it is a PDF the tools cannot read (it read as an empty page).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;

/** A one-page PDF saying "Invoice 4711". */
const PDF = [
  '%PDF-1.4',
  '1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj',
  '2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj',
  '3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 300 200]/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>endobj',
  '4 0 obj<</Length 44>>stream',
  'BT /F1 18 Tf 20 100 Td (Invoice 4711) Tj ET',
  'endstream endobj',
  '5 0 obj<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>endobj',
  'trailer<</Root 1 0 R>>',
  '%%EOF',
].join('\n');

beforeAll(async () => {
  h = await startBrowserHarness({
    routes: (req) => {
      const u = new URL(req.url);
      if (u.pathname === '/s22d/work') return new Response(`<!doctype html><title>Work ${u.search}</title><input id="field"><button id="go">Go</button>`, { headers: { 'content-type': 'text/html' } });
      if (u.pathname === '/s22d/empty') return new Response('<!doctype html><title>Empty</title>', { headers: { 'content-type': 'text/html' } });
      if (u.pathname === '/s22d/invoice.pdf') return new Response(PDF, { headers: { 'content-type': 'application/pdf' } });
      // A page that never finishes loading.
      if (u.pathname === '/s22d/endless') return new Response(new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode('<!doctype html><title>Endless</title><p>loading')); } }), { headers: { 'content-type': 'text/html' } });
      return undefined;
    },
  });
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

/** A background tab at the work page, loaded. */
const workTab = async (tag: string): Promise<number> => {
  const r = await h.callTool('browser_open_tab', { url: h.fixtureUrl(`/s22d/work?${tag}`) });
  expect(r.status).toBe(200);
  const id = r.body.result.id as number;
  await waitUntil(async () => (await h.callTool('browser_get_tab_info', { tabId: id })).body.result?.status === 'complete', `tab ${tag} to load`);
  return id;
};

/** What the user does in Chrome, through the extension's worker (as the tab strip would). */
const userDoes = async (fn: string, tabId: number, url?: string) => {
  const sw = await h.serviceWorker();
  await sw.evaluate(async ([f, id, u]) => {
    if (f === 'close') await chrome.tabs.remove(id as number);
    else await chrome.tabs.update(id as number, { url: u as string });
  }, [fn, tabId, url] as const);
};

/** The call reached the extension, and a moment for its wait to start in the page (not an assertion). */
const running = async (tool: string) => {
  await waitUntil(() => h.srv.ctx.hub.inFlightDispatches > 0 || null, `${tool} to be dispatched`);
  await Bun.sleep(1_000);
};

test('closed during a wait: the wait ends at once saying the tab was closed', async () => {
  for (const [tool, args] of [
    ['browser_wait_for', { text: 'text that never appears', timeoutMs: 25_000 }],
    ['browser_wait_for_element', { selector: '#never-there', timeoutMs: 25_000 }],
  ] as const) {
    const tabId = await workTab(tool);
    const call = h.callTool(tool, { tabId, ...args });
    await running(tool);
    await userDoes('close', tabId);
    const r = await call;
    expect({ tool, code: r.body.error?.code }).toEqual({ tool, code: 'tab_closed' });
    expect(r.body.error.message).toContain(`Tab ${tabId}`);
    // Closed while the call ran (not found closed before it).
    expect(r.body.error.message).toMatch(/closed while/);
  }
}, 120_000);

test('closed while a navigation loads: the navigation ends saying the tab was closed', async () => {
  const tabId = await workTab('navigate');
  const call = h.callTool('browser_navigate_tab', { tabId, url: h.fixtureUrl('/s22d/endless'), timeoutMs: 60_000 });
  await running('browser_navigate_tab');
  await userDoes('close', tabId);
  const r = await call;
  expect(r.body.error?.code).toBe('tab_closed');
  expect(r.body.error.message).toContain(`Tab ${tabId} was closed while`);
}, 60_000);

test('navigated during a wait: the wait ends saying the page navigated', async () => {
  const tabId = await workTab('nav');
  const call = h.callTool('browser_wait_for_element', { tabId, selector: '#never-there', timeoutMs: 25_000 });
  await running('browser_wait_for_element');
  await userDoes('navigate', tabId, h.fixtureUrl('/s22d/work?elsewhere'));
  const r = await call;
  expect(r.body.error?.message).toMatch(/navigated or reloaded/);
  expect(r.body.error.code).not.toBe('timeout');
}, 60_000);

test('closed just before a call: snapshot, click, type and screenshot say the tab is gone', async () => {
  const tabId = await workTab('gone');
  await userDoes('close', tabId);
  for (const [tool, args] of [
    ['browser_snapshot', {}],
    ['browser_click_element', { selector: '#go' }],
    ['browser_type_text', { selector: '#field', text: 'x' }],
    ['browser_screenshot_tab', {}],
    ['browser_wait_for', { text: 'x' }],
  ] as const) {
    const r = await h.callTool(tool, { tabId, ...args });
    expect({ tool, status: r.status, code: r.body.error?.code }).toEqual({ tool, status: 409, code: 'tab_closed' });
    expect(r.body.error.message).toContain(`${tabId}`);
    expect(r.body.error.message).toContain('browser_list_tabs');
  }
}, 60_000);

test('a PDF tab: snapshot and text say it is a PDF they cannot read, a screenshot shows it', async () => {
  const r = await h.callTool('browser_open_tab', { url: h.fixtureUrl('/s22d/invoice.pdf') });
  const tabId = r.body.result.id as number;
  await waitUntil(async () => (await h.callTool('browser_get_tab_info', { tabId })).body.result?.status === 'complete', 'the PDF to load');
  const snap = await h.callTool('browser_snapshot', { tabId });
  expect(snap.status).toBe(200);
  expect(snap.body.result.note).toContain('PDF');
  const text = await h.callTool('browser_get_tab_content', { tabId });
  expect(text.body.result.note).toContain('PDF');
  const shot = await h.callTool('browser_screenshot_tab', { tabId });
  expect(shot.status).toBe(200);
  // An ordinary empty page gets no such note.
  const blank = await h.callTool('browser_open_tab', { url: h.fixtureUrl('/s22d/empty') });
  await waitUntil(async () => (await h.callTool('browser_get_tab_info', { tabId: blank.body.result.id })).body.result?.status === 'complete', 'the page to load');
  const empty = await h.callTool('browser_get_tab_content', { tabId: blank.body.result.id });
  expect(empty.body.result).toMatchObject({ length: 0 });
  expect(empty.body.result.note).toBeUndefined();
  expect((await h.callTool('browser_snapshot', { tabId: blank.body.result.id })).body.result.note).toBeUndefined();
}, 60_000);
