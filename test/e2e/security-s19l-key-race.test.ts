/**
 * Keys go to the frame that has focus. The key guard checks where focus is, then the keys are sent
 * through the debugger; a page timer moving focus into an iframe of a refused page (another
 * extension's inline menu, where Enter picks an entry; here a hidden file with a field, file://
 * allowed) between the check and the key got keys into that frame. Now, while keys are sent, such
 * iframes carry the HTML inert attribute (an inert iframe cannot take focus); a page taking it off
 * meanwhile gets the call failed and no more keys. Performed as an agent would (REST tool calls);
 * the pages are loaded with Playwright, which also reads what the refused frame got.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Frame, Page } from 'playwright-core';
import { allowFileUrls, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(180_000);

let h: BrowserHarness;
let home = '';
const ROUNDS = 16;

/** A field and the menu's iframe; a timer every 1 ms moves focus into the menu and back to the field by turns. `extra`: more of the timer's body; `head`: a stylesheet. */
function racePage(name: string, extra = '', head = ''): void {
  writeFileSync(
    join(home, 'site', `${name}.html`),
    `<!doctype html><title>${name}</title>${head}<body style="margin:0">
    <input id="name" aria-label="Name">
    <iframe id="m" src="file://${home}/.ssh/menu.html" style="border:0;width:400px;height:100px;display:block"></iframe>
    <script>
      const m = document.getElementById('m');
      const field = document.getElementById('name');
      let into = false;
      setInterval(() => { into = !into; ${extra} if (into) m.focus(); else field.focus(); }, 1);
    </script>`,
  );
}

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s19l-keys-'));
  mkdirSync(join(home, '.ssh'));
  mkdirSync(join(home, 'site'));
  // The refused frame: a field that takes focus with its frame, and a count of the keys it got.
  writeFileSync(
    join(home, '.ssh', 'menu.html'),
    `<!doctype html><body><input id="i"><script>window.keys = 0; const i = document.getElementById('i'); addEventListener('focus', () => i.focus()); addEventListener('keydown', () => { window.keys++; }); i.addEventListener('input', () => { window.keys++; });</script>`,
  );
  writeFileSync(join(home, 'site', 'plain.html'), '<!doctype html><p>note</p>');
  racePage('race');
  // The same, with a page stylesheet asking for the iframe to be interactive whatever its attributes.
  racePage('styled', '', '<style>iframe { interactivity: auto !important; }</style>');
  // The same, and the timer takes the inert attribute off the iframe.
  racePage('strip', `m.removeAttribute('inert');`);
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
  await allowFileUrls(h, `file://${home}/site/plain.html`);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

async function opened(name: string): Promise<{ page: Page; tabId: number; menu: Frame; keys: () => Promise<number> }> {
  const page = await h.context.newPage();
  await page.goto(`file://${home}/site/${name}.html`);
  const menu = await waitUntil(async () => page.frames().find((f) => f.url().endsWith('/.ssh/menu.html')) ?? null, 'the menu frame');
  await waitUntil(async () => ((await menu.evaluate(() => typeof (window as unknown as { keys?: number }).keys)) === 'number' ? true : null), 'the menu frame to count');
  return { page, tabId: await h.tabIdOf(page), menu, keys: () => menu.evaluate(() => (window as unknown as { keys: number }).keys) };
}

/** The calls of a race: Enter with and without the field named, and typing into it. */
const CALLS = [
  ['browser_press_key', { selector: '#name', key: 'Enter' }],
  ['browser_press_key', { key: 'Enter' }],
  ['browser_type_text', { selector: '#name', text: 'x' }],
] as const;

describe('a page timer moving focus into a refused frame while keys are sent', () => {
  for (const name of ['race', 'styled']) {
    test(`${name}: no key reaches the frame, and keys to the field work`, async () => {
      const { page, tabId, keys } = await opened(name);
      try {
        let sent = 0;
        for (let i = 0; i < ROUNDS; i++) {
          for (const [tool, args] of CALLS) {
            const r = await h.callTool(tool, { tabId, ...args });
            // Refused when the check itself found focus in the frame; otherwise sent.
            if (r.status === 200) sent++;
            else expect([tool, i, r.body?.error?.code]).toEqual([tool, i, 'page_not_allowed']);
          }
        }
        expect(await keys()).toBe(0);
        expect(sent).toBeGreaterThan(0);
        // The attribute was the page's again after each call.
        expect(await page.evaluate(() => document.getElementById('m')!.hasAttribute('inert'))).toBe(false);
      } finally {
        await page.close();
      }
    });
  }

  test('a page taking the inert attribute off: the call is reported and no more keys are sent', async () => {
    const { page, tabId, keys } = await opened('strip');
    try {
      let reported = false;
      for (let i = 0; i < 4 * ROUNDS && !reported; i++) {
        const r = await h.callTool('browser_press_key', { tabId, selector: '#name', key: 'Enter' });
        if (r.status === 200) continue;
        if (/keys are refused in this page from now on/.test(String(r.body?.error?.message))) reported = true;
        else expect([i, r.body?.error?.code]).toEqual([i, 'page_not_allowed']);
      }
      expect(reported).toBe(true);
      // At most the reported key went in (a keydown and no input for Enter); none after it.
      const after = await keys();
      expect(after).toBeLessThanOrEqual(1);
      for (const [tool, args] of CALLS) {
        const r = await h.callTool(tool, { tabId, ...args });
        expect([tool, r.status, r.body?.error?.code]).toEqual([tool, 403, 'page_not_allowed']);
      }
      expect(await keys()).toBe(after);
    } finally {
      await page.close();
    }
  });
});
