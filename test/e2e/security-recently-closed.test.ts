/**
 * Closed tabs, history and bookmarks lead back to pages the built-in tools refuse (the side panel
 * in a tab, auth.json, chrome://): restoring one would open such a page without any url argument
 * to check, and listing them would show what browser_list_tabs hides. Performed as an agent would:
 * REST tool calls only; the pages are opened and closed with Playwright, as the user could have.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { expectPageRefused, startBrowserHarness, waitUntil, type BrowserHarness, type ToolCallResult } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
const responses: ToolCallResult[] = [];

async function call(name: string, args: Record<string, unknown> = {}): Promise<ToolCallResult> {
  const r = await h.callTool(name, args);
  responses.push(r);
  return r;
}

const expectRefused = (r: ToolCallResult, what: string): void => expectPageRefused(r, what, /Tools may not open closed (tab|window)/);

const openUrls = async (): Promise<string[]> => (await h.serviceWorker()).evaluate(async () => (await chrome.tabs.query({})).map((t) => t.url || t.pendingUrl || ''));

interface Closed {
  kind: string;
  sessionId: string;
  url?: string;
  title?: string;
  restricted?: string;
}
const closedList = async (): Promise<Closed[]> => (await call('browser_list_recently_closed', { limit: 25 })).body.result.closed;

beforeAll(async () => {
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

describe('recently closed privileged pages', () => {
  test('are listed without path or title, and are not reopened', async () => {
    const privileged = [`chrome-extension://${h.extensionId}/sidepanel.html`, `chrome-extension://${h.extensionId}/auth.json`, 'chrome://version/'];
    for (const url of privileged) {
      const p = await h.context.newPage();
      await p.goto(url);
      await p.close();
    }
    const closed = await waitUntil(async () => {
      const list = await closedList();
      return list.filter((c) => c.restricted).length >= privileged.length ? list : null;
    }, 'the closed pages in the list');
    const text = JSON.stringify(closed);
    expect(text).not.toContain('sidepanel.html');
    expect(text).not.toContain('auth.json');
    expect(text).not.toContain('About Version');
    const restricted = closed.filter((c) => c.restricted);
    for (const c of restricted) expect(c.title).toBe('');
    expect(restricted.map((c) => c.url).sort()).toEqual([`chrome-extension://${h.extensionId}/`, `chrome-extension://${h.extensionId}/`, 'chrome://version/'].sort());

    const before = await openUrls();
    // The most recent (chrome://version) by default, and each by its sessionId.
    expectRefused(await call('browser_restore_closed'), 'restore the most recent');
    for (const c of restricted) expectRefused(await call('browser_restore_closed', { sessionId: c.sessionId }), `restore ${c.url}`);
    expect(await openUrls()).toEqual(before);
    // Still in the list: nothing was restored behind the refusal.
    expect((await closedList()).filter((c) => c.restricted).length).toBe(restricted.length);
  });

  test('a closed window with one such tab is not reopened', async () => {
    const worker = await h.serviceWorker();
    const fixture = h.fixtureUrl('/pages/index.html?in-closed-window');
    const windowId = await worker.evaluate(async ({ urls }) => (await chrome.windows.create({ url: urls }))!.id!, { urls: [fixture, `chrome-extension://${h.extensionId}/sidepanel.html`] });
    // Both tabs loaded (a tab closed before its page committed is not remembered with it).
    await waitUntil(
      () => worker.evaluate(async (id) => {
        const tabs = await chrome.tabs.query({ windowId: id });
        return tabs.length === 2 && tabs.every((t) => t.status === 'complete' && !!t.url) && tabs.some((t) => t.url!.endsWith('sidepanel.html'));
      }, windowId),
      'the window to load',
    );
    const closedBefore = (await closedList()).length;
    await worker.evaluate(async (id) => chrome.windows.remove(id), windowId);
    const win = await waitUntil(async () => {
      const list = await closedList();
      return list.length > closedBefore || list.length === 25 ? list.find((c) => c.kind === 'window') : null;
    }, 'the closed window in the list');
    // Chrome remembers the window with both its tabs.
    expect(await worker.evaluate(async (sid) => (await chrome.sessions.getRecentlyClosed({})).find((s) => s.window?.sessionId === sid)?.window?.tabs?.length, win.sessionId)).toBe(2);
    const before = await openUrls();
    expectRefused(await call('browser_restore_closed', { sessionId: win.sessionId }), 'restore the window');
    expect(await openUrls()).toEqual(before);
  });

  test('an ordinary closed tab is still restored', async () => {
    const p = await h.context.newPage();
    await p.goto(h.fixtureUrl('/pages/index.html?closed-ordinary'));
    await p.close();
    const c = await waitUntil(async () => (await closedList()).find((x) => x.url?.includes('closed-ordinary')), 'the closed tab in the list');
    expect(c.restricted).toBeUndefined();
    const r = await call('browser_restore_closed', { sessionId: c.sessionId });
    expect(r.status).toBe(200);
    expect(r.body.result.tab.url).toContain('closed-ordinary');
    const unknown = await call('browser_restore_closed', { sessionId: 'no-such-session' });
    expect(unknown.status).toBe(404);
  });
});

describe('history and bookmarks', () => {
  test('show refused pages without path or title', async () => {
    const worker = await h.serviceWorker();
    await worker.evaluate(async (id) => {
      await chrome.bookmarks.create({ title: 'OpenTabs secret file', url: `chrome-extension://${id}/auth.json` });
      await chrome.bookmarks.create({ title: 'OpenTabs ordinary bookmark', url: 'https://example.com/ordinary' });
    }, h.extensionId);
    const bm = await call('browser_search_bookmarks', { query: 'OpenTabs' });
    expect(bm.status).toBe(200);
    // A search leaves refused pages out (the words may match what a redacted entry hides).
    expect(bm.body.result.bookmarks).toEqual([{ id: expect.any(String), title: 'OpenTabs ordinary bookmark', url: 'https://example.com/ordinary' }]);
    expect(JSON.stringify(bm.body)).not.toContain('auth.json');
    // No oracle: words only the hidden path or title holds find nothing.
    for (const query of ['auth.json', 'secret file']) {
      const probe = await call('browser_search_bookmarks', { query });
      expect([query, probe.status, probe.body.result.bookmarks]).toEqual([query, 200, []]);
    }

    // The side panel page the first test opened in a tab is in history.
    const hist = await waitUntil(async () => {
      const r = await call('browser_search_history', { query: '', limit: 100 });
      return (r.body.result?.items as { url: string; title: string; restricted?: string }[])?.find((i) => i.url.startsWith('chrome-extension:')) ? r : null;
    }, 'the extension page in history');
    const text = JSON.stringify(hist.body);
    expect(text).not.toContain('sidepanel.html');
    expect(text).not.toContain('auth.json');
    for (const i of hist.body.result.items as { url: string; title: string; restricted?: string }[]) {
      if (!i.url.startsWith('http')) expect(i).toMatchObject({ title: '', restricted: expect.any(String) });
    }
    expect((hist.body.result.items as { url: string }[]).some((i) => i.url.includes('closed-ordinary'))).toBe(true);
    // With words to find, the history search leaves refused pages out too.
    const probe = await call('browser_search_history', { query: 'sidepanel', limit: 100 });
    expect([probe.status, (probe.body.result.items as { url: string }[]).filter((i) => i.url.startsWith('chrome-extension:'))]).toEqual([200, []]);
  });

  test('the secret appears in no response of this file', () => {
    expect(responses.length).toBeGreaterThan(5);
    for (const r of responses) expect(JSON.stringify(r.body)).not.toContain(h.srv.secret);
  });
});
