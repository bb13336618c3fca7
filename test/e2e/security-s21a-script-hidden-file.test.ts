/**
 * With file:// pages on, a file:// page can load other local files as scripts and style sheets,
 * and browser_execute_script runs the agent's code in such a page: code adding
 * <script src="file:///…/project/.env"> read the hidden file's KEY="value" lines as globals, and a
 * hidden style sheet's custom properties through getComputedStyle, though hidden files stay
 * refused to every tool. Now the script is not run in a document that loaded a resource of a file
 * the tools may not use, and a result is dropped when such a resource was loaded while the code
 * ran. Performed as an agent would: REST tool calls, in real Chromium with the real extension.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allowFileUrls, expectPageRefused, startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

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

async function fresh(): Promise<{ tabId: number; close: () => Promise<void> }> {
  const page = await h.context.newPage();
  await page.goto(`file://${home}/Downloads/plain.html`);
  return { tabId: await h.tabIdOf(page), close: () => page.close() };
}

describe('browser_execute_script in a file:// page loading a hidden file', () => {
  test('as a script: the result is dropped, and no later script runs in that page', async () => {
    const { tabId, close } = await fresh();
    try {
      const r = await h.callTool('browser_execute_script', { tabId, code: load(`file://${home}/project/.env`, 'String(window.TOKEN)') });
      expectPageRefused(r, 'the script loading .env', /a resource \(script\) from a file tools may not use \(it is a hidden file.*result is not returned/);
      expect(JSON.stringify(r.body)).not.toContain(SECRET);
      const again = await h.callTool('browser_execute_script', { tabId, code: 'String(window.TOKEN)' });
      expectPageRefused(again, 'a later script', /no script is run in it/);
      expect(JSON.stringify(again.body)).not.toContain(SECRET);
    } finally {
      await close();
    }
  });

  test('as a style sheet: its custom properties are not read', async () => {
    const { tabId, close } = await fresh();
    try {
      const r = await h.callTool('browser_execute_script', { tabId, code: load(`file://${home}/project/.config/theme.css`, "getComputedStyle(document.documentElement).getPropertyValue('--secret')", true) });
      expectPageRefused(r, 'the script loading theme.css', /a resource \(stylesheet\) from a file tools may not use/);
      expect(JSON.stringify(r.body)).not.toContain(CSS_SECRET);
    } finally {
      await close();
    }
  });

  test('a visible file loads and the result comes back; so does a script after a hidden picture', async () => {
    const { tabId, close } = await fresh();
    try {
      const r = await h.callTool('browser_execute_script', { tabId, code: load(`file://${home}/Downloads/settings.js`, 'String(window.VISIBLE)') });
      expect([r.status, r.body?.result]).toEqual([200, { type: 'string', value: 'a visible script' }]);
      const code = `return await new Promise((done) => { const i = new Image(); i.onload = () => done(i.naturalWidth); i.onerror = () => done('not loaded'); i.src = ${JSON.stringify(`file://${home}/project/.config/dot.png`)}; document.body.append(i); })`;
      const pic = await h.callTool('browser_execute_script', { tabId, code });
      expect([pic.status, pic.body?.result]).toEqual([200, { type: 'number', value: 1 }]);
    } finally {
      await close();
    }
  });
});
