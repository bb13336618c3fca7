/**
 * Iframes inside a closed shadow root: browser_snapshot reads them, but element tools cannot tell
 * which iframe of the page holds the frame, and said the frame was "another origin's" even for the
 * page's own. Now the error names the closed shadow root and what still works (browser_click_at at
 * a point), and a frame there showing a page the tools refuse (a hidden file, file:// allowed) is
 * reached by no input: a click at its point is refused, and nothing reaches it.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allowFileUrls, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(180_000);

let h: BrowserHarness;
let home = '';

const html = (body: string) => new Response(body, { headers: { 'content-type': 'text/html' } });

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s20a-closed-'));
  mkdirSync(join(home, '.ssh'));
  mkdirSync(join(home, 'site'));
  writeFileSync(
    join(home, '.ssh', 'menu.html'),
    `<!doctype html><body style="margin:0;height:100vh"><input id="i"><script>for (const t of ['mousedown', 'click', 'keydown']) addEventListener(t, () => parent.postMessage(t, '*'), true);</script>`,
  );
  writeFileSync(join(home, 'site', 'plain.html'), '<!doctype html><p>note</p>');
  writeFileSync(
    join(home, 'site', 'closed.html'),
    `<!doctype html><body style="margin:0"><x-menu></x-menu><script>
      window.got = [];
      addEventListener('message', (e) => window.got.push(String(e.data)));
      const root = document.querySelector('x-menu').attachShadow({ mode: 'closed' });
      root.innerHTML = '<iframe src="file://${home}/.ssh/menu.html" style="border:0;width:300px;height:100px;display:block"></iframe>';
    </script>`,
  );
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto' } },
    routes: (req) => {
      const u = new URL(req.url);
      if (u.pathname === '/s20a-closed.html') {
        return html(`<!doctype html><body style="margin:0"><x-card></x-card><script>
          customElements.define('x-card', class extends HTMLElement {});
          const root = document.querySelector('x-card').attachShadow({ mode: 'closed' });
          root.innerHTML = '<iframe src="/s20a-inner.html" style="border:0;width:300px;height:100px;display:block"></iframe>';
        </script>`);
      }
      if (u.pathname === '/s20a-inner.html') return html(`<!doctype html><body style="margin:0"><button style="width:200px;height:40px" onclick="parent.postMessage('clicked', '*')">Inner</button>`);
      return undefined;
    },
  });
  await allowFileUrls(h, `file://${home}/site/plain.html`);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('iframes inside closed shadow roots', () => {
  test("the page's own: element tools say why they cannot reach it; a click at its point works", async () => {
    const page = await h.context.newPage();
    try {
      await page.goto(h.fixtureUrl('/s20a-closed.html'));
      await page.evaluate(() => { (window as unknown as { got: string[] }).got = []; addEventListener('message', (e) => (window as unknown as { got: string[] }).got.push(String(e.data))); });
      const tabId = await h.tabIdOf(page);
      const ref = await waitUntil(async () => {
        const s = await h.callTool('browser_snapshot', { tabId });
        return /button Inner \[(f\d+e\d+)\]/.exec(String(s.body?.result?.snapshot))?.[1] ?? null;
      }, 'the inner button in the snapshot');
      const r = await h.callTool('browser_click_element', { tabId, ref });
      expect([r.status, r.body?.error?.code]).toEqual([501, 'not_available']);
      expect(String(r.body?.error?.message)).toContain('inside a closed shadow root');
      expect(String(r.body?.error?.message)).toContain('browser_click_at');
      const at = await h.callTool('browser_click_at', { tabId, x: 100, y: 20 });
      expect(at.status).toBe(200);
      await waitUntil(() => page.evaluate(() => (window as unknown as { got: string[] }).got.includes('clicked') || null), 'the click in the inner page');
    } finally {
      await page.close();
    }
  });

  test('a refused page there: no click or key reaches it', async () => {
    const page = await h.context.newPage();
    try {
      await page.goto(`file://${home}/site/closed.html`);
      const tabId = await h.tabIdOf(page);
      await waitUntil(() => page.frames().find((f) => f.url().endsWith('/.ssh/menu.html')) ?? null, 'the menu frame');
      const click = await h.callTool('browser_click_at', { tabId, x: 100, y: 50 });
      expect([click.status, click.body?.error?.code]).toEqual([403, 'page_not_allowed']);
      const key = await h.callTool('browser_press_key', { tabId, key: 'a', modifiers: ['Control'] });
      expect([key.status, key.body?.error?.code]).toEqual([403, 'page_not_allowed']);
      expect(await page.evaluate(() => (window as unknown as { got: string[] }).got)).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
