/**
 * Keys go to the frame that has focus. A key for an element of an allowed iframe (a ref fFeN) was
 * checked in that frame's document: its focused element was the field, not an iframe. But a page
 * can move focus out of that frame into a sibling iframe showing a page the tools may not use
 * right after the field was focused (another extension's inline menu, where Enter picks an entry;
 * here a hidden file with a field, file:// allowed): the frame of the field keeps naming the field
 * as its focused element, and the keys went into the refused frame. Performed as an agent would
 * (REST tool calls); the page is loaded with Playwright, which also reads what the refused frame got.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Frame, Page } from 'playwright-core';
import { allowFileUrls, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let home = '';

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s19a-keys-'));
  mkdirSync(join(home, '.ssh'));
  mkdirSync(join(home, 'site'));
  // The refused frame: a field that takes focus with its frame, and a count of the keys it got.
  writeFileSync(
    join(home, '.ssh', 'menu.html'),
    `<!doctype html><body><input id="i"><script>window.keys = 0; const i = document.getElementById('i'); addEventListener('focus', () => i.focus()); addEventListener('keydown', () => { window.keys++; }); i.addEventListener('input', () => { window.keys++; });</script>`,
  );
  writeFileSync(join(home, 'site', 'form.html'), '<!doctype html><body><input id="name" aria-label="Name">');
  writeFileSync(join(home, 'site', 'plain.html'), '<!doctype html><p>note</p>');
  // The top page sends focus into the refused frame as soon as it went into the form's frame.
  writeFileSync(
    join(home, 'site', 'page.html'),
    `<!doctype html><title>page</title><body style="margin:0">
    <iframe id="f" src="form.html" style="border:0;width:400px;height:100px;display:block"></iframe>
    <iframe id="m" src="file://${home}/.ssh/menu.html" style="border:0;width:400px;height:100px;display:block"></iframe>
    <script>
      const m = document.getElementById('m');
      addEventListener('blur', () => setTimeout(() => { if (document.activeElement?.id === 'f') m.focus(); }, 0));
    </script>`,
  );
  // The same frames, focus left where the agent put it.
  writeFileSync(
    join(home, 'site', 'calm.html'),
    `<!doctype html><title>calm</title><body style="margin:0">
    <iframe id="f" src="form.html" style="border:0;width:400px;height:100px;display:block"></iframe>
    <iframe id="m" src="file://${home}/.ssh/menu.html" style="border:0;width:400px;height:100px;display:block"></iframe>`,
  );
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
  await allowFileUrls(h, `file://${home}/site/plain.html`);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

async function opened(name: string): Promise<{ page: Page; tabId: number; menu: Frame; ref: string }> {
  const page = await h.context.newPage();
  await page.goto(`file://${home}/site/${name}.html`);
  const menu = await waitUntil(async () => page.frames().find((f) => f.url().endsWith('/.ssh/menu.html')) ?? null, 'the menu frame');
  await waitUntil(async () => ((await menu.evaluate(() => typeof (window as unknown as { keys?: number }).keys)) === 'number' ? true : null), 'the menu frame to count');
  const tabId = await h.tabIdOf(page);
  const snap = await waitUntil(async () => {
    const r = await h.callTool('browser_snapshot', { tabId });
    const m = /textbox Name \[(f\d+e\d+)\]/.exec(String(r.body?.result?.snapshot ?? r.body?.result?.content ?? JSON.stringify(r.body)));
    return m ? m[1]! : null;
  }, 'the form field ref');
  return { page, tabId, menu, ref: snap };
}

describe('keys for an allowed frame while focus went on into a refused one', () => {
  test('type_text and press_key by the field\'s ref: nothing reaches the refused frame', async () => {
    const { page, tabId, menu, ref } = await opened('page');
    try {
      for (const [tool, args] of [['browser_type_text', { ref, text: 'agent text' }], ['browser_press_key', { ref, key: 'Enter' }], ['browser_press_key', { ref, key: 'a' }]] as const) {
        const r = await h.callTool(tool, { tabId, ...args });
        expect([tool, r.status, r.body?.error?.code]).toEqual([tool, 403, 'page_not_allowed']);
        expect(String(r.body?.error?.message)).toContain('focus gone on from the frame of that element');
      }
      expect(await menu.evaluate(() => (window as unknown as { keys: number }).keys)).toBe(0);
    } finally {
      await page.close();
    }
  });

  test('with focus left in the field, its frame takes the keys as before', async () => {
    const { page, tabId, menu, ref } = await opened('calm');
    try {
      const typed = await h.callTool('browser_type_text', { tabId, ref, text: 'agent text' });
      expect([typed.status, typed.body?.error?.message]).toEqual([200, undefined]);
      const pressed = await h.callTool('browser_press_key', { tabId, ref, key: '!' });
      expect([pressed.status, pressed.body?.error?.message]).toEqual([200, undefined]);
      const form = page.frames().find((f) => f.url().endsWith('/site/form.html'))!;
      expect(await form.evaluate(() => (document.getElementById('name') as HTMLInputElement).value)).toBe('agent text!');
      expect(await menu.evaluate(() => (window as unknown as { keys: number }).keys)).toBe(0);
    } finally {
      await page.close();
    }
  });
});
