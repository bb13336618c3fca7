/**
 * Another extension's content script sends requests from the page's tab: a translator posting the
 * page's text with its own API key, a password manager asking its server. The page never sees
 * their headers or bodies (the content script's world is not the page's), but network capture on
 * the tab recorded them, key, body and answer, for the agent to read with
 * browser_get_network_requests or browser_export_har. Such requests (their initiator's stack runs
 * through another extension's script) are not recorded now; the page's own requests still are.
 * Performed as an agent would (REST tool calls) with a real second extension loaded beside OpenTabs.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(180_000);

const KEY = 'TR-KEY-s23a-7d1e';
const HEADER = 'TR-HEADER-s23a-4b2c';
const BODY = 'TR-BODY-s23a-9a0f';
const ANSWER = 'TR-ANSWER-s23a-3e5d';

/** The translator's content script: on the page's signal, a fetch and an XHR of its own, with its key. */
const CONTENT_SCRIPT = `
document.addEventListener('s23a-translate', () => {
  const x = new XMLHttpRequest();
  x.open('GET', '/s23a-translate?xhr=${KEY}');
  x.onload = () => {
    fetch('/s23a-translate?key=${KEY}', { method: 'POST', headers: { 'x-translator-key': '${HEADER}' }, body: 'text=${BODY}' })
      .then((r) => r.text())
      .then((t) => { document.documentElement.dataset.translated = t.length > 0 ? 'yes' : 'no'; });
  };
  x.send();
});
`;

let h: BrowserHarness;
let extDir = '';

beforeAll(async () => {
  extDir = mkdtempSync(join(tmpdir(), 'opentabs-s23a-translator-'));
  writeFileSync(join(extDir, 'manifest.json'), JSON.stringify({ manifest_version: 3, name: 'Translator', version: '1.0', content_scripts: [{ matches: ['<all_urls>'], js: ['translate.js'], run_at: 'document_idle' }] }));
  writeFileSync(join(extDir, 'translate.js'), CONTENT_SCRIPT);
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto' } },
    extraExtensions: [extDir],
    routes: (req) => {
      const u = new URL(req.url);
      if (u.pathname === '/s23a-app.html') return new Response('<!doctype html><title>app</title><p>Bonjour</p>', { headers: { 'content-type': 'text/html; charset=utf-8' } });
      if (u.pathname === '/s23a-translate') return new Response(JSON.stringify({ translated: ANSWER }), { headers: { 'content-type': 'application/json' } });
      if (u.pathname === '/s23a-own') return new Response('{"own":true}', { headers: { 'content-type': 'application/json' } });
      return undefined;
    },
  });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (extDir) rmSync(extDir, { recursive: true, force: true });
});

test('network capture keeps the page\'s requests and not another extension\'s', async () => {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/s23a-app.html'));
  const tabId = await h.tabIdOf(page);
  const on = await h.callTool('browser_enable_network_capture', { tabId, captureBodies: true });
  expect(on.status).toBe(200);
  // The extension's requests, then the page's own, which ends the capture's wait.
  await page.evaluate(() => document.dispatchEvent(new Event('s23a-translate')));
  await page.waitForFunction(() => document.documentElement.dataset.translated === 'yes');
  await page.evaluate(() => fetch('/s23a-own').then((r) => r.text()));
  const list = await h.callTool('browser_get_network_requests', { tabId, includeBodies: true });
  expect(list.status).toBe(200);
  const urls = (list.body.result.requests as { url: string }[]).map((r) => new URL(r.url).pathname);
  expect(urls).toContain('/s23a-own');
  expect(urls).not.toContain('/s23a-translate');
  const har = await h.callTool('browser_export_har', { tabId });
  expect(har.status).toBe(200);
  for (const text of [JSON.stringify(list.body), JSON.stringify(har.body)]) {
    for (const s of [KEY, HEADER, BODY, ANSWER]) expect(text).not.toContain(s);
  }
  await page.close();
});
