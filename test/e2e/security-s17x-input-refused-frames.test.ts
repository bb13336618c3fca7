/**
 * Trusted input goes where Chrome sends a person's: a click to the frame drawn at the point, keys
 * to the frame with focus. With file:// allowed, a file:// page (one the agent saved with
 * browser_download, say) can frame a hidden file; a click at the iframe, Ctrl+A and Ctrl+C there,
 * then a click in the page's textarea and Ctrl+V copied ~/.ssh/id_rsa into text the agent reads,
 * though every reading tool refuses that frame. Mouse input at an iframe and key input while
 * focus is in one are now refused while a frame of the tab shows a page the tools may not use;
 * the page's other elements still take input. Performed as an agent would: REST tool calls only;
 * the page is loaded with Playwright so its iframe is there when the calls come.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { expectPageRefused, startBrowserHarness, type BrowserHarness, allowFileUrls } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let home = '';
let page: Page;
let tabId = 0;
const PRIVATE = 'PRIVATE-KEY-LINE-7c6b5a';
const REFUSED = /in an iframe, which tools may not use \(it is a hidden file/;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s17x-input-'));
  mkdirSync(join(home, '.ssh'));
  writeFileSync(join(home, '.ssh', 'id_rsa'), `${PRIVATE}\n`);
  // What an agent would have saved with browser_download: the user's key in a frame, a field to
  // paste into, a field and a button that send focus into the frame.
  writeFileSync(
    join(home, 'report.html'),
    `<!doctype html><title>report</title><body style="margin:0">
    <iframe id="k" src="file://${home}/.ssh/id_rsa" style="border:0;width:400px;height:100px;display:block"></iframe>
    <textarea id="t"></textarea> <input id="trap"> <button id="b">next</button>
    <script>
      const k = document.getElementById('k');
      document.getElementById('trap').addEventListener('focus', () => k.focus());
      document.getElementById('b').addEventListener('click', () => k.focus());
    </script>`,
  );
  writeFileSync(join(home, 'plain.html'), '<!doctype html><p>note</p>');
  // Moves the framed key under the pointer as soon as the mouse moves: a check of what is at the
  // point made before the click's move sees the button.
  writeFileSync(
    join(home, 'lure.html'),
    `<!doctype html><title>lure</title><body style="margin:0">
    <button id="go" style="position:absolute;left:20px;top:200px;width:120px;height:40px">go</button>
    <iframe id="k" src="file://${home}/.ssh/id_rsa" style="position:absolute;left:600px;top:0;border:0;width:300px;height:120px"></iframe>
    <script>
      const k = document.getElementById('k');
      addEventListener('mousemove', (e) => { k.style.left = (e.clientX - 150) + 'px'; k.style.top = (e.clientY - 60) + 'px'; });
    </script>`,
  );
  // The same frame inside a custom element's closed shadow root (as extensions' inline menus
  // are): the page's own hit test and focus stop at the element.
  writeFileSync(
    join(home, 'shadow.html'),
    `<!doctype html><title>shadow</title><body style="margin:0">
    <x-menu style="display:block;width:400px;height:100px"></x-menu><button id="b">next</button>
    <script>
      const root = document.querySelector('x-menu').attachShadow({ mode: 'closed' });
      root.innerHTML = '<iframe src="file://${home}/.ssh/id_rsa" style="border:0;width:400px;height:100px;display:block"></iframe>';
      document.getElementById('b').addEventListener('click', () => root.querySelector('iframe').focus());
    </script>`,
  );
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
  // The user turned file:// pages on.
  await allowFileUrls(h, `file://${home}/plain.html`);
  page = await h.context.newPage();
  await page.goto(`file://${home}/report.html`);
  tabId = await h.tabIdOf(page);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

const textarea = () => page.evaluate(() => (document.getElementById('t') as HTMLTextAreaElement).value);

describe('input into a frame the tools may not use', () => {
  test('the copy of the framed key into the page does not happen', async () => {
    // Chrome draws the key in the frame.
    expect((await Promise.all(page.frames().map((f) => f.evaluate(() => document.body?.innerText ?? '').catch(() => '')))).some((t) => t.includes(PRIVATE))).toBe(true);
    // Into the frame; select all and copy there; paste into the textarea.
    const into = await h.callTool('browser_click_at', { tabId, x: 50, y: 20 });
    await h.callTool('browser_press_key', { tabId, key: 'a', modifiers: ['Control'] });
    await h.callTool('browser_press_key', { tabId, key: 'c', modifiers: ['Control'] });
    expect((await h.callTool('browser_click_element', { tabId, selector: '#t' })).status).toBe(200);
    await h.callTool('browser_press_key', { tabId, key: 'v', modifiers: ['Control'] });
    expect(await textarea()).not.toContain(PRIVATE);
    expectPageRefused(into, 'click_at in the frame', REFUSED);
  });

  test('no mouse event at the iframe, by point, selector or drag', async () => {
    for (const [tool, args] of [
      ['browser_click_at', { x: 200, y: 50 }],
      ['browser_move_mouse', { x: 200, y: 50 }],
      ['browser_click_element', { selector: '#k' }],
      ['browser_hover_element', { selector: '#k' }],
      ['browser_drag', { sourceSelector: '#t', targetSelector: '#k' }],
    ] as const) {
      expectPageRefused(await h.callTool(tool, { tabId, ...args }), `${tool} ${JSON.stringify(args)}`, REFUSED);
    }
  });

  test('no keys while the page has put focus into the iframe', async () => {
    // The button's own handler focuses the frame: the click itself is the page's business.
    expect((await h.callTool('browser_click_element', { tabId, selector: '#b' })).status).toBe(200);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('k');
    for (const [tool, args] of [
      ['browser_press_key', { key: 'a', modifiers: ['Control'] }],
      ['browser_press_key', { key: 'c', modifiers: ['Control'] }],
      // Focusing the field sends focus on into the frame.
      ['browser_type_text', { selector: '#trap', text: 'typed' }],
      ['browser_press_key', { selector: '#trap', key: 'c', modifiers: ['Control'] }],
    ] as const) {
      expectPageRefused(await h.callTool(tool, { tabId, ...args }), `${tool} ${JSON.stringify(args)}`, REFUSED);
    }
  });

  test('no shortcut keys at all while such a frame is in the page, wherever focus is', async () => {
    expect((await h.callTool('browser_click_element', { tabId, selector: '#t' })).status).toBe(200);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('t');
    for (const key of ['a', 'c', 'x']) {
      expectPageRefused(await h.callTool('browser_press_key', { tabId, key, modifiers: ['Control'] }), `Ctrl+${key}`, REFUSED);
    }
  });

  test("the page's own fields still take input", async () => {
    expect((await h.callTool('browser_click_element', { tabId, selector: '#t' })).status).toBe(200);
    expect((await h.callTool('browser_type_text', { tabId, selector: '#t', text: 'hello' })).status).toBe(200);
    expect((await h.callTool('browser_press_key', { tabId, key: '!' })).status).toBe(200);
    expect(await textarea()).toBe('hello!');
    expect((await h.callTool('browser_click_at', { tabId, x: 5, y: 110 })).status).toBe(200);
  });
});

describe('the frame inside a closed shadow root', () => {
  test('takes neither mouse events nor keys', async () => {
    const shadow = await h.context.newPage();
    try {
      await shadow.goto(`file://${home}/shadow.html`);
      const id = await h.tabIdOf(shadow);
      for (const [tool, args] of [
        ['browser_click_at', { x: 200, y: 50 }],
        ['browser_move_mouse', { x: 200, y: 50 }],
        ['browser_click_element', { selector: 'x-menu' }],
        ['browser_hover_element', { selector: 'x-menu' }],
      ] as const) {
        expectPageRefused(await h.callTool(tool, { tabId: id, ...args }), `${tool} ${JSON.stringify(args)}`, /in an iframe, which tools may not use/);
      }
      expect((await h.callTool('browser_click_element', { tabId: id, selector: '#b' })).status).toBe(200);
      expect(await shadow.evaluate(() => document.activeElement?.tagName)).toBe('X-MENU');
      expectPageRefused(await h.callTool('browser_press_key', { tabId: id, key: 'a' }), 'a key with focus in the shadow root\'s frame', /in an iframe, which tools may not use/);
    } finally {
      await shadow.close();
    }
  });
});

describe('a frame the page moves under the pointer when the mouse moves', () => {
  test('takes no press: the point is checked again once the page has the move', async () => {
    for (const [tool, args] of [
      ['browser_click_element', { selector: '#go' }],
      ['browser_click_at', { x: 80, y: 220 }],
    ] as const) {
      const lure = await h.context.newPage();
      try {
        await lure.goto(`file://${home}/lure.html`);
        const id = await h.tabIdOf(lure);
        const r = await h.callTool(tool, { tabId: id, ...args });
        expect(await lure.evaluate(() => document.activeElement?.id ?? null)).not.toBe('k');
        expectPageRefused(r, `${tool} on the lure`, /in an iframe, which tools may not use/);
      } finally {
        await lure.close();
      }
    }
  });
});
