/**
 * Keys go to the frame that has focus. The key guard pins the iframes of refused frames inert while
 * keys are sent, but only those there when it looked: a page that adds an iframe of a refused page
 * (here a hidden file with a field, file:// allowed; another extension's inline menu, where Enter
 * picks an entry, likewise) when its field gets focus, and focuses that iframe once it loaded, had
 * it load between the guard's look and the keys (the debugger attaching takes a while), and the
 * keys went into it, with or without another refused frame there (pinned) from the start. Now the tab is watched while keys are sent: once a frame starts loading a
 * refused page no further key is sent, and one loading after the last key with focus gone on from
 * the field fails the call and refuses later keys in that page. Performed as an agent would (REST
 * tool calls); the pages are loaded with Playwright, which also reads what the refused frame got.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allowFileUrls, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(180_000);

let h: BrowserHarness;
let home = '';
const ROUNDS = 8;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s20a-keys-'));
  mkdirSync(join(home, '.ssh'));
  mkdirSync(join(home, 'site'));
  // The refused frame: a field that takes focus with its frame, telling its page of every key and input.
  writeFileSync(
    join(home, '.ssh', 'menu.html'),
    `<!doctype html><body><input id="i"><script>const i = document.getElementById('i'); addEventListener('focus', () => i.focus()); addEventListener('keydown', (e) => parent.postMessage('key ' + e.key, '*')); i.addEventListener('input', () => parent.postMessage('input ' + i.value, '*'));</script>`,
  );
  writeFileSync(join(home, 'site', 'plain.html'), '<!doctype html><p>note</p>');
  // Each time the field gets focus (the tools focus it before typing), a new iframe of the hidden
  // file is added and focused as soon as it loaded.
  writeFileSync(
    join(home, 'site', 'grow.html'),
    `<!doctype html><body><input id="name" aria-label="Name"><script>
      window.got = [];
      addEventListener('message', (e) => window.got.push(String(e.data)));
      document.getElementById('name').addEventListener('focus', () => {
        const f = document.createElement('iframe');
        f.src = 'file://${home}/.ssh/menu.html';
        f.onload = () => { f.dataset.loaded = '1'; f.focus(); };
        document.body.append(f);
      });
    </script>`,
  );
  // The same with a refused frame there from the start (pinned inert while keys are sent): the one added is not.
  writeFileSync(
    join(home, 'site', 'grow2.html'),
    readFileSync(join(home, 'site', 'grow.html'), 'utf8').replace('<body>', `<body><iframe id="first" src="file://${home}/.ssh/menu.html" style="width:100px;height:40px"></iframe>`),
  );
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
  await allowFileUrls(h, `file://${home}/site/plain.html`);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('a refused frame added and focused while keys are sent', () => {
  for (const name of ['grow', 'grow2']) test(`${name}: no key or text reaches it; calls refused say so`, async () => {
    const page = await h.context.newPage();
    try {
      await page.goto(`file://${home}/site/${name}.html`);
      if (name === 'grow2') await waitUntil(() => page.frames().find((f) => f.url().endsWith('/.ssh/menu.html')) ?? null, 'the first menu frame');
      const tabId = await h.tabIdOf(page);
      const refusals: string[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        for (const [tool, args] of [
          ['browser_type_text', { selector: '#name', text: `typed${i}`, submit: true }],
          ['browser_press_key', { selector: '#name', key: 'Enter' }],
        ] as const) {
          // A fresh start each time: no iframe, nothing focused.
          await page.evaluate(() => {
            (document.activeElement as HTMLElement | null)?.blur();
            for (const f of document.querySelectorAll('iframe:not(#first)')) f.remove();
          });
          const r = await h.callTool(tool, { tabId, ...args });
          if (r.status !== 200) {
            expect([tool, i, r.body?.error?.code]).toEqual([tool, i, 'page_not_allowed']);
            refusals.push(String(r.body?.error?.message));
          }
        }
      }
      // Every iframe added loaded and took its focus; then what the frames got is read.
      await waitUntil(() => page.evaluate(() => [...document.querySelectorAll('iframe:not(#first)')].every((f) => (f as HTMLElement).dataset.loaded === '1') || null), 'the iframes to load');
      await page.evaluate(() => new Promise((r) => setTimeout(r, 0)));
      expect(await page.evaluate(() => (window as unknown as { got: string[] }).got)).toEqual([]);
      expect(refusals.length).toBeGreaterThan(0);
    } finally {
      await page.close();
    }
  });
});
