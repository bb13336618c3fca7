/**
 * In Chromium with the real extension: an open aria-modal dialog of the top page leaves its
 * iframes outside it out of a user's reach, for every tool that puts input into a frame, not only
 * browser_fill_form and browser_type_text. browser_press_key (at a ref, and at the focus when the
 * focus is in such an iframe), browser_click_element, browser_hover_element, browser_drag and
 * browser_select_option refuse an element of such an iframe (of the page's origin, and of another
 * origin in a process of its own), naming the dialog, and the frame's page sees no event. An
 * iframe inside the dialog keeps taking keys at the focus; once the dialog is closed, the frames
 * take input again.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Frame, Page } from 'playwright-core';
import { resultOf, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

/** A frame's page: a field, a button, a select and two buttons to drag between; it records the events it sees. */
const CARD = `<!doctype html><title>Card</title><body>
<label>Card number <input id="card"></label>
<button id="pay">Pay now</button>
<label>Plan <select id="plan"><option value="basic">Basic</option><option value="pro">Pro</option></select></label>
<button id="src">Drag me</button> <button id="dst">Drop here</button>
<script>window.events = [];
for (const t of ['keydown', 'click', 'mouseover', 'mousedown', 'input', 'change']) document.addEventListener(t, (e) => events.push(t + ':' + (e.target.id || e.target.tagName)), true);
</script></body>`;

let h: BrowserHarness;
let other: ReturnType<typeof Bun.serve>;
let page: Page;
let tabId = 0;

const html = (body: string, headers: Record<string, string> = {}) => new Response(body, { headers: { 'content-type': 'text/html', ...headers } });

beforeAll(async () => {
  // Another port of 127.0.0.1: another origin, in a process of its own.
  other = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => html(CARD, { 'origin-agent-cluster': '?1' }) });
  h = await startBrowserHarness({
    routes: (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/card.html') return html(CARD);
      if (path === '/top.html') {
        // The dialog sits below the iframes and covers none of them: only the page's word (aria-modal) puts them out of reach.
        return html(`<!doctype html><title>Checkout</title><body style="margin:0">
<iframe title="Local pay" src="/card.html" style="display:block;width:480px;height:90px"></iframe>
<iframe title="Remote pay" src="http://127.0.0.1:${other.port}/card.html" style="display:block;width:480px;height:90px"></iframe>
<div id="modal" role="dialog" aria-modal="true" aria-label="Confirm order" hidden style="position:fixed;top:260px;left:20px;background:#fff;border:1px solid #333">
  <p>Pay with the card below?</p>
  <iframe title="Dialog pay" src="/card.html?dialog" style="display:block;width:480px;height:90px"></iframe>
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
const events = (f: Frame) => f.evaluate(() => (window as any).events.splice(0) as string[]);
const modal = (shown: boolean) => page.evaluate((s) => (document.getElementById('modal')!.hidden = !s), shown);

/** The refs of a frame's controls, from the snapshot lines under the iframe titled `title`. */
function refsIn(snap: string, title: string): Record<'card' | 'pay' | 'plan' | 'src' | 'dst', string> {
  const lines = snap.split('\n');
  const at = lines.findIndex((l) => l.trimStart().startsWith(`iframe ${title}`));
  const end = lines.findIndex((l, i) => i > at && l.trimStart().startsWith('iframe '));
  const part = lines.slice(at, end < 0 ? undefined : end).join('\n');
  const ref = (label: RegExp) => {
    const m = new RegExp(`${label.source}[^\\n]*?\\[(f\\d+e\\d+)\\]`).exec(part);
    if (!m) throw new Error(`no ${label} under iframe ${title} in:\n${part}`);
    return m[1]!;
  };
  return { card: ref(/textbox Card number/), pay: ref(/button Pay now/), plan: ref(/select Plan/), src: ref(/button Drag me/), dst: ref(/Drop here/) };
}

const behind = 'is in an iframe behind the open modal dialog "Confirm order" (<div id="modal">) of the page, which a user cannot reach until it is closed';
const act = "Act in the dialog, or close it first (its close or cancel button with browser_click_element)";
const refusal = (r: Awaited<ReturnType<BrowserHarness['callTool']>>) => ({ status: r.status, message: r.body.error?.message as string | undefined });

test('an open modal dialog of the top page: press_key, click, hover, drag and select_option refuse an element of an iframe outside it, and the frame sees nothing', async () => {
  const snap = resultOf(await h.callTool('browser_snapshot', { tabId })).snapshot as string;
  const frames = [
    { refs: refsIn(snap, 'Local pay'), frame: local },
    { refs: refsIn(snap, 'Remote pay'), frame: remote },
  ];
  await modal(true);
  for (const { refs, frame } of frames) {
    expect(refusal(await h.callTool('browser_press_key', { tabId, ref: refs.card, key: 'a' }))).toEqual({ status: 400, message: `The element ${refs.card} ${behind}: the key was not pressed. ${act}` });
    expect(refusal(await h.callTool('browser_click_element', { tabId, ref: refs.pay }))).toEqual({ status: 400, message: `The element ${refs.pay} ${behind}: nothing was clicked. ${act}` });
    expect(refusal(await h.callTool('browser_hover_element', { tabId, ref: refs.pay }))).toEqual({ status: 400, message: `The element ${refs.pay} ${behind}: the mouse was not moved. ${act}` });
    expect(refusal(await h.callTool('browser_select_option', { tabId, ref: refs.plan, value: 'pro' }))).toEqual({ status: 400, message: `The element ${refs.plan} ${behind}: no option was chosen. ${act}` });
    expect(refusal(await h.callTool('browser_drag', { tabId, sourceRef: refs.src, targetRef: refs.dst }))).toEqual({ status: 400, message: `The drag's source ${refs.src} ${behind}: nothing was dragged. ${act}` });
    expect(await events(frame())).toEqual([]);
    expect(await frame().evaluate(() => (document.getElementById('plan') as HTMLSelectElement).value)).toBe('basic');
  }

  // Closed: the same calls reach the frames.
  await modal(false);
  for (const { refs, frame } of frames) {
    resultOf(await h.callTool('browser_press_key', { tabId, ref: refs.card, key: 'a' }));
    resultOf(await h.callTool('browser_click_element', { tabId, ref: refs.pay }));
    resultOf(await h.callTool('browser_select_option', { tabId, ref: refs.plan, value: 'pro' }));
    const seen = await events(frame());
    expect(seen).toEqual(expect.arrayContaining(['keydown:card', 'click:pay', 'change:plan']));
  }
}, 120_000);

test('keys at the focus: refused while the focus is in an iframe behind the open modal dialog, sent while it is in the dialog\'s own iframe', async () => {
  const snap = resultOf(await h.callTool('browser_snapshot', { tabId })).snapshot as string;
  for (const [title, frame] of [['Local pay', local], ['Remote pay', remote]] as const) {
    await modal(false);
    // A real click puts the focus in the frame's field; the dialog opens afterwards, leaving it there.
    resultOf(await h.callTool('browser_click_element', { tabId, ref: refsIn(snap, title).card }));
    await modal(true);
    expect(await page.evaluate(() => (document.activeElement as HTMLIFrameElement | null)?.title)).toBe(title);
    await frame().evaluate(() => ((document.getElementById('card') as HTMLInputElement).value = ''));
    await events(frame());
    expect(refusal(await h.callTool('browser_press_key', { tabId, key: 'x' }))).toEqual({ status: 400, message: `The focus in tab ${tabId} ${behind}: the key was not pressed. ${act}` });
    expect(await events(frame())).toEqual([]);
    expect(await frame().evaluate(() => (document.getElementById('card') as HTMLInputElement).value)).toBe('');
  }

  // The dialog's own iframe is reachable: keys at the focus go there, through the walk down the frames.
  await modal(true);
  const dialogRefs = refsIn(resultOf(await h.callTool('browser_snapshot', { tabId })).snapshot as string, 'Dialog pay');
  resultOf(await h.callTool('browser_click_element', { tabId, ref: dialogRefs.card }));
  await events(inDialog());
  resultOf(await h.callTool('browser_press_key', { tabId, key: 'x' }));
  expect(await inDialog().evaluate(() => (document.getElementById('card') as HTMLInputElement).value)).toBe('x');
  expect(await events(inDialog())).toContain('keydown:card');
  await modal(false);
}, 120_000);
