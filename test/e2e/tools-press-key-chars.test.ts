/**
 * browser_press_key types any one character, in Chromium with the real extension: punctuation
 * whose character code is also a navigation key's code ('(' is ArrowDown's 40, '.' Delete's 46,
 * '#' End's, '$' Home's, '%' ArrowLeft's, '&' ArrowUp's, "'" ArrowRight's) lands as the character
 * instead of moving the caret, and so do characters no US key types (é, €, an emoji).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;

beforeAll(async () => {
  h = await startBrowserHarness({ routes: (req) => (new URL(req.url).pathname === '/keys.html' ? new Response('<!doctype html><title>Keys</title><input id="i">', { headers: { 'content-type': 'text/html' } }) : undefined) });
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

test('each character pressed into a field is typed there', async () => {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/keys.html'));
  const tabId = await h.tabIdOf(page);
  const keys = ['a', 'Z', '7', '!', '?', '(', ')', '&', '%', '.', '#', '$', "'", '"', '\\', '/', '-', '~', ',', ';', 'é', '€', '😀'];
  const typed: Record<string, string> = {};
  for (const key of keys) {
    await page.fill('#i', 'x');
    const r = await h.callTool('browser_press_key', { tabId, selector: '#i', key });
    expect({ key, status: r.status }).toEqual({ key, status: 200 });
    typed[key] = await page.inputValue('#i');
  }
  expect(typed).toEqual(Object.fromEntries(keys.map((k) => [k, `x${k}`])));
  await page.close();
});
