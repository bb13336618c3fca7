/**
 * In Chromium with the real extension: a modal dialog open in the top page (a shown aria-modal
 * dialog) leaves the page's iframes outside it out of a user's reach, and what they hold with
 * them. browser_fill_form and browser_type_text refuse a field of such an iframe (of the page's
 * origin, and of another origin in a process of its own), naming the dialog, and set nothing;
 * browser_snapshot says (inert) on those iframes and on every control they hold. An iframe inside
 * the dialog stays usable; once the dialog is closed, the frames' fields fill again.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Frame, Page } from 'playwright-core';
import { resultOf, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

/** A card form: its field records the input events it saw. */
const CARD = `<!doctype html><title>Card</title><body>
<label>Card number <input id="card"></label>
<script>window.events = []; card.addEventListener('input', () => events.push('input'));</script></body>`;

let h: BrowserHarness;
let other: ReturnType<typeof Bun.serve>;
let page: Page;
let tabId = 0;

const html = (body: string, headers: Record<string, string> = {}) => new Response(body, { headers: { 'content-type': 'text/html', ...headers } });

beforeAll(async () => {
  // Another port of 127.0.0.1: another origin, in a process of its own.
  other = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => html(CARD.replace('<title>Card</title>', '<title>Remote card</title>'), { 'origin-agent-cluster': '?1' }) });
  h = await startBrowserHarness({
    routes: (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/card.html') return html(CARD);
      if (path === '/top.html') {
        return html(`<!doctype html><title>Checkout</title><body><h1>Checkout</h1>
<iframe title="Local pay" src="/card.html" style="width:360px;height:60px"></iframe>
<iframe title="Remote pay" src="http://127.0.0.1:${other.port}/card.html" style="width:360px;height:60px"></iframe>
<div id="modal" role="dialog" aria-modal="true" aria-label="Confirm order" hidden style="position:fixed;top:200px;left:20px;background:#fff;border:1px solid #333">
  <p>Pay with the card below?</p>
  <iframe title="Dialog pay" src="/card.html?dialog" style="width:360px;height:60px"></iframe>
  <button id="close" onclick="modal.hidden = true">Close</button>
</div></body>`);
      }
      return undefined;
    },
  });
  page = await h.context.newPage();
  await page.setViewportSize({ width: 1000, height: 700 });
  await page.goto(h.fixtureUrl('/top.html'));
  tabId = await h.tabIdOf(page);
  await waitUntil(() => page.frames().length === 4 && page.frames().every((f) => f.url() !== ''), 'the frames to load');
}, 60_000);

afterAll(async () => {
  await h?.stop();
  other?.stop(true);
});

const frameAt = (url: string): Frame => page.frames().find((f) => f.url() === url)!;
const local = () => frameAt(h.fixtureUrl('/card.html'));
const remote = () => frameAt(`http://127.0.0.1:${other.port}/card.html`);
const inDialog = () => frameAt(h.fixtureUrl('/card.html?dialog'));
const state = async (f: Frame) => f.evaluate(() => ({ value: (document.getElementById('card') as HTMLInputElement).value, events: (window as any).events.length }));

/** The iframe line starting `iframe <title>` and the card field's line under it. */
function frameLines(snap: string, title: string): { head: string; field: string; ref: string } {
  const lines = snap.split('\n');
  const at = lines.findIndex((l) => l.trimStart().startsWith(`iframe ${title}`));
  const head = lines[at]!;
  const rest = [head.slice(head.indexOf('): ') + 1), ...lines.slice(at + 1)];
  const field = rest.find((l) => l.includes('textbox Card number'))!;
  return { head, field, ref: /\[(f\d+e\d+)\]/.exec(field)![1]! };
}

test('an open modal dialog of the top page: its iframes outside it say (inert), their fields refuse fill_form and type_text, the dialog\'s own iframe fills', async () => {
  await page.evaluate(() => (document.getElementById('modal')!.hidden = false));
  const snap = resultOf(await h.callTool('browser_snapshot', { tabId })).snapshot as string;
  const loc = frameLines(snap, 'Local pay');
  const rem = frameLines(snap, 'Remote pay');
  const dia = frameLines(snap, 'Dialog pay');
  expect({ loc, rem, snap }).toMatchObject({ loc: { head: expect.stringContaining('iframe Local pay (inert)'), field: expect.stringContaining('(inert)') }, rem: { head: expect.stringContaining('iframe Remote pay (inert)'), field: expect.stringContaining('(inert)') } });
  expect(dia.head).not.toContain('(inert)');
  expect(dia.field).not.toContain('(inert)');

  for (const { ref } of [loc, rem]) {
    const fill = await h.callTool('browser_fill_form', { tabId, fields: [{ ref, value: '4111' }] });
    expect({ status: fill.status, message: fill.body.error?.message }).toEqual({
      status: 400,
      message: `fields[0]: ${ref} is in an iframe behind the open modal dialog "Confirm order" (<div id="modal">) of the page, which a user cannot reach until it is closed: nothing was filled. Fill the dialog's own fields, or close it first (its close or cancel button with browser_click_element)`,
    });
    const typed = await h.callTool('browser_type_text', { tabId, ref, text: '4111' });
    expect({ status: typed.status, message: typed.body.error?.message }).toEqual({
      status: 400,
      message: `The element ${ref} is in an iframe behind the open modal dialog "Confirm order" (<div id="modal">) of the page, which a user cannot reach until it is closed: the text was not typed. Act in the dialog, or close it first (its close or cancel button with browser_click_element)`,
    });
  }
  expect(await state(local())).toEqual({ value: '', events: 0 });
  expect(await state(remote())).toEqual({ value: '', events: 0 });

  // The dialog's own iframe is reachable.
  resultOf(await h.callTool('browser_fill_form', { tabId, fields: [{ ref: dia.ref, value: '5500' }] }));
  expect(await state(inDialog())).toEqual({ value: '5500', events: 1 });

  // Closed: the frames fill and take typing again, and say (inert) no more.
  await page.evaluate(() => (document.getElementById('modal')!.hidden = true));
  const after = resultOf(await h.callTool('browser_snapshot', { tabId })).snapshot as string;
  expect(frameLines(after, 'Local pay').head).not.toContain('(inert)');
  expect(frameLines(after, 'Remote pay').field).not.toContain('(inert)');
  resultOf(await h.callTool('browser_fill_form', { tabId, fields: [{ ref: loc.ref, value: '4111' }] }));
  resultOf(await h.callTool('browser_type_text', { tabId, ref: rem.ref, text: '4242' }));
  expect(await state(local())).toEqual({ value: '4111', events: 1 });
  expect((await state(remote())).value).toBe('4242');
}, 120_000);
