/**
 * browser_execute_script's quick way: one DevTools evaluation that runs the code only in the
 * document checked beforehand (its `location.href`, which a page cannot redefine) and only if the
 * page started it in time. Checked in real Chromium: the guard refuses another document even when
 * the page tries to fake its URL, refuses a late start, and a normal call costs one evaluation
 * (no DOM.describeNode, no compile step) while still working after history.pushState.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { guardedAttempt, scriptAttempts, SCRIPT_LATE, SCRIPT_MOVED } from '../../extension/tools/script-eval.ts';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

// The page tries every way a script has to make `location.href` say something else.
const SPOOF_PAGE = `<!doctype html><title>Spoof</title><script>
const fake = 'https://approved.example/';
for (const f of [
  () => Object.defineProperty(location, 'href', { get: () => fake }),
  () => Object.defineProperty(Location.prototype, 'href', { get: () => fake }),
  () => Object.defineProperty(window, 'location', { value: { href: fake } }),
  () => { window.location.__proto__ = { href: fake }; },
]) { try { f(); } catch {} }
var location;
</script><p>spoof</p>`;

let h: BrowserHarness;
let page: Page;
let tabId = 0;

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto', tools: { browser_execute_script: 'auto' } } },
    routes: (req) => (new URL(req.url).pathname === '/spoof.html' ? new Response(SPOOF_PAGE, { headers: { 'content-type': 'text/html' } }) : undefined),
  });
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/spoof.html'));
  tabId = await h.tabIdOf(page);
});

afterAll(async () => {
  await h?.stop();
});

/** Evaluates a guarded attempt the way the extension does (DevTools Runtime.evaluate). */
async function evaluate(url: string, notAfter: number, code = '(window.ran = (window.ran || 0) + 1, "did run")') {
  const cdp = await h.context.newCDPSession(page);
  try {
    const r = (await cdp.send('Runtime.evaluate', { expression: guardedAttempt(scriptAttempts(code)[0]!, url, notAfter), awaitPromise: true, returnByValue: true })) as { result: { value?: unknown } };
    return r.result.value;
  } finally {
    await cdp.detach();
  }
}

describe('the guard of the quick way', () => {
  test('another document: nothing runs, even when the page fakes its URL', async () => {
    expect(await evaluate('https://approved.example/', Date.now() + 60_000)).toBe(SCRIPT_MOVED);
    expect(await evaluate(h.fixtureUrl('/other.html'), Date.now() + 60_000)).toBe(SCRIPT_MOVED);
    expect(await page.evaluate(() => (window as unknown as { ran?: number }).ran ?? 0)).toBe(0);
  });

  test('started after its deadline (a busy page held it): nothing runs', async () => {
    expect(await evaluate(page.url(), Date.now() - 1)).toBe(SCRIPT_LATE);
    expect(await page.evaluate(() => (window as unknown as { ran?: number }).ran ?? 0)).toBe(0);
  });

  test('the checked document, in time: the code runs once', async () => {
    expect(await evaluate(page.url(), Date.now() + 60_000)).toEqual({ type: 'string', value: 'did run' });
    expect(await page.evaluate(() => (window as unknown as { ran?: number }).ran)).toBe(1);
  });
});

describe('browser_execute_script', () => {
  test('one evaluation per call, no document lookup; after history.pushState it still runs (once)', async () => {
    const sw = await h.serviceWorker();
    await sw.evaluate(() => {
      const g = globalThis as unknown as { __sent: string[]; __origSend?: unknown };
      g.__sent = [];
      const d = chrome.debugger as unknown as { sendCommand: (...a: unknown[]) => Promise<unknown> };
      const original = d.sendCommand;
      g.__origSend = original;
      d.sendCommand = function (...a: unknown[]) {
        g.__sent.push(String(a[1]));
        return original.apply(chrome.debugger, a as never);
      };
    });
    const sent = () => sw.evaluate(() => (globalThis as unknown as { __sent: string[] }).__sent.splice(0));
    const r = await h.callTool('browser_execute_script', { tabId, code: 'document.title' });
    expect(r.body.result).toEqual({ type: 'string', value: 'Spoof' });
    expect(await sent()).toEqual(['Runtime.evaluate']);
    // A body with return: the expression form does not compile, the body form runs.
    const body = await h.callTool('browser_execute_script', { tabId, code: 'const n = 20; return n + 1' });
    expect(body.body.result).toEqual({ type: 'number', value: 21 });
    expect(await sent()).toEqual(['Runtime.evaluate', 'Runtime.evaluate']);
    // An exception thrown by the code is reported, and the code ran once (no second form tried).
    const threw = await h.callTool('browser_execute_script', { tabId, code: 'window.tries = (window.tries || 0) + 1; JSON.parse("{")' });
    expect(threw.status).not.toBe(200);
    expect(threw.body.error.message).toContain('SyntaxError');
    expect(await page.evaluate(() => (window as unknown as { tries?: number }).tries)).toBe(1);
    await sent();
    await page.evaluate(() => history.pushState({}, '', '/moved-within.html'));
    const after = await h.callTool('browser_execute_script', { tabId, code: '(window.pushed = (window.pushed || 0) + 1, location.pathname)' });
    expect(after.body.result).toEqual({ type: 'string', value: '/moved-within.html' });
    expect(await page.evaluate(() => (window as unknown as { pushed?: number }).pushed)).toBe(1);
    await sw.evaluate(() => {
      const g = globalThis as unknown as { __origSend: unknown };
      (chrome.debugger as unknown as { sendCommand: unknown }).sendCommand = g.__origSend;
    });
  });
});
