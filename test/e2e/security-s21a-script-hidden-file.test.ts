/**
 * With file:// pages on, a file:// page can load other local files as scripts and style sheets,
 * and browser_execute_script runs the agent's code in such a page: code adding
 * <script src="file:///…/project/.env"> read the hidden file's KEY="value" lines as globals, and a
 * hidden style sheet's custom properties through getComputedStyle, though hidden files stay
 * refused to every tool; a timer the code set could load it later for other tools to read. Now a
 * document the agent's code runs in loads no local script or style sheet from then on (nor do the
 * srcdoc and about:blank frames in it), and no code runs in a document that loaded one of a file
 * the tools may not use. Performed as an agent would: REST tool calls, in real Chromium with the
 * real extension.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { allowFileUrls, expectPageRefused, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(180_000);

let h: BrowserHarness;
let home = '';
const SECRET = 's3cr3t-9f2e7a';
const CSS_SECRET = 'css-s3cr3t-41bd';

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s21a-script-'));
  mkdirSync(join(home, 'project', '.config'), { recursive: true });
  mkdirSync(join(home, 'Downloads'));
  writeFileSync(join(home, 'project', '.env'), `TOKEN="${SECRET}"\n`);
  writeFileSync(join(home, 'project', '.config', 'theme.css'), `:root{--secret:"${CSS_SECRET}"}`);
  writeFileSync(join(home, 'Downloads', 'settings.js'), 'VISIBLE="a visible script"');
  // A 1×1 picture: a page's scripts cannot read what a picture of another file holds.
  writeFileSync(join(home, 'project', '.config', 'dot.png'), Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64'));
  writeFileSync(join(home, 'Downloads', 'plain.html'), '<!doctype html><p>an ordinary local note</p>');
  writeFileSync(join(home, 'Downloads', 'framed.html'), '<!doctype html><title>framed</title><p>a note</p><iframe id="old" srcdoc="<p>old</p>"></iframe>');
  writeFileSync(join(home, 'Downloads', 'own.html'), `<!doctype html><title>own</title><script src="file://${home}/project/.env"></script><p>a note</p>`);
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto', tools: { browser_execute_script: 'auto' } } } });
  await allowFileUrls(h, `file://${home}/Downloads/plain.html`);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

/** Code that loads `url` as a script (or, `css`, a style sheet) and returns once it loaded, with `read`'s value. */
const load = (url: string, read: string, css = false) =>
  `return await new Promise((done) => { const e = document.createElement('${css ? 'link' : 'script'}'); ${css ? "e.rel = 'stylesheet'; e.href" : 'e.src'} = ${JSON.stringify(url)}; e.onload = () => done(${read}); e.onerror = () => done('not loaded'); document.head.append(e); })`;

async function fresh(name = 'plain.html'): Promise<{ tabId: number; close: () => Promise<void>; page: Page }> {
  const page = await h.context.newPage();
  await page.goto(`file://${home}/Downloads/${name}`);
  return { tabId: await h.tabIdOf(page), close: () => page.close(), page };
}

describe('browser_execute_script in a file:// page loading a hidden file', () => {
  test('as a script, now or later (a timer, a srcdoc iframe, an iframe there before): nothing of it reaches a tool', async () => {
    const { tabId, close, page } = await fresh('framed.html');
    try {
      const env = `file://${home}/project/.env`;
      const r = await h.callTool('browser_execute_script', { tabId, code: load(env, 'String(window.TOKEN)') });
      expect([r.status, r.body?.result]).toEqual([200, { type: 'string', value: 'not loaded' }]);
      // Later, from a timer the code set: the page's title and text would hold the value.
      const armed = await h.callTool('browser_execute_script', {
        tabId,
        code: `setTimeout(() => { const e = document.createElement('script'); e.src = ${JSON.stringify(env)}; e.onload = () => { document.title = window.TOKEN; document.body.append(window.TOKEN); window.later = 'loaded'; }; e.onerror = () => { window.later = 'not loaded'; }; document.head.append(e); }, 50); return 'armed'`,
      });
      expect([armed.status, armed.body?.result?.value]).toEqual([200, 'armed']);
      await waitUntil(() => page.evaluate(() => (window as unknown as { later?: string }).later), 'the later load');
      expect(await page.evaluate(() => (window as unknown as { later?: string }).later)).toBe('not loaded');
      // In iframes sharing the page's origin: one the code makes, one the page had.
      for (const make of ['const f = document.createElement("iframe"); f.srcdoc = "<p>x</p>"; const ready = new Promise((r) => { f.onload = r; }); document.body.append(f);', 'const f = document.getElementById("old"); const ready = Promise.resolve();']) {
        const code = `return await new Promise((done) => { ${make} ready.then(() => { const d = f.contentDocument; const e = d.createElement('script'); e.src = ${JSON.stringify(env)}; e.onload = () => done(String(f.contentWindow.TOKEN)); e.onerror = () => done('not loaded'); d.head.append(e); }); })`;
        const inFrame = await h.callTool('browser_execute_script', { tabId, code });
        expect(JSON.stringify(inFrame.body)).not.toContain(SECRET);
        expect([inFrame.status, inFrame.body?.result?.value]).toEqual([200, 'not loaded']);
      }
      for (const [tool, args] of [['browser_get_tab_content', { tabId }], ['browser_list_tabs', {}], ['browser_snapshot', { tabId }]] as const) {
        const read = await h.callTool(tool, args);
        expect([tool, read.status, JSON.stringify(read.body).includes(SECRET)]).toEqual([tool, 200, false]);
      }
    } finally {
      await close();
    }
  });

  test('a page that loaded one itself: no script is run in it', async () => {
    const { tabId, close } = await fresh('own.html');
    try {
      const r = await h.callTool('browser_execute_script', { tabId, code: 'String(window.TOKEN)' });
      expectPageRefused(r, 'a script in the page', /a resource \(script\) from a file tools may not use \(it is a hidden file.*no script is run in it/);
      expect(JSON.stringify(r.body)).not.toContain(SECRET);
    } finally {
      await close();
    }
  });

  test('as a style sheet: its custom properties are not read', async () => {
    const { tabId, close } = await fresh();
    try {
      const r = await h.callTool('browser_execute_script', { tabId, code: load(`file://${home}/project/.config/theme.css`, "getComputedStyle(document.documentElement).getPropertyValue('--secret') || 'none'", true) });
      expect(JSON.stringify(r.body)).not.toContain(CSS_SECRET);
      expect([r.status, r.body?.result?.value]).toEqual([200, 'not loaded']);
    } finally {
      await close();
    }
  });

  test('a script after a hidden picture runs; inline scripts still run', async () => {
    const { tabId, close } = await fresh();
    try {
      const code = `return await new Promise((done) => { const i = new Image(); i.onload = () => done(i.naturalWidth); i.onerror = () => done('not loaded'); i.src = ${JSON.stringify(`file://${home}/project/.config/dot.png`)}; document.body.append(i); })`;
      const pic = await h.callTool('browser_execute_script', { tabId, code });
      expect([pic.status, pic.body?.result]).toEqual([200, { type: 'number', value: 1 }]);
      const inline = await h.callTool('browser_execute_script', { tabId, code: "const e = document.createElement('script'); e.textContent = 'window.inline = 7'; document.head.append(e); return window.inline" });
      expect([inline.status, inline.body?.result]).toEqual([200, { type: 'number', value: 7 }]);
    } finally {
      await close();
    }
  });
});
