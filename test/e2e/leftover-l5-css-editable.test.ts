/**
 * Elements editable only through CSS (`-webkit-user-modify: read-write` or
 * `read-write-plaintext-only`, no contenteditable attribute) are listed by browser_snapshot as
 * text boxes, in the full snapshot and with interactiveOnly (which finds its elements with
 * selectors, and went past these: it now uses the selectors of the style rules that set it), in
 * the page and inside an open shadow root; typing into one through its ref works. Chrome edits
 * them as it does contenteditable but leaves them out of isContentEditable, so neither snapshot
 * listed them before. Real Chromium, real extension.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);
let h: BrowserHarness;
let page: Page;
let tabId = 0;

const PAGE = `<!doctype html><title>CSS editable</title>
<style>.rw { -webkit-user-modify: read-write; } .plain { -webkit-user-modify: read-write-plaintext-only; }
@media screen { #by-media { -webkit-user-modify: read-write; } }</style>
<body>
<h1>CSS editable</h1>
<section><div><div class="rw" aria-label="Rich notes" style="min-height:20px">rich text</div></div></section>
<div><p><span class="plain" aria-label="Plain notes">plain text</span></p></div>
<div style="-webkit-user-modify: read-write" aria-label="Inline styled">inline styled</div>
<div contenteditable aria-label="Attribute editor">by attribute</div>
<div class="rw" style="-webkit-user-modify: read-only" aria-label="Read only">not editable</div>
<ul><li><div id="by-media" aria-label="Media rule">in a media rule</div></li></ul>
<p>Plain paragraph</p>
</body>`;

const SHADOW = `<!doctype html><title>CSS editable in a shadow root</title><body>
<h1>Shadow</h1><p>Text</p><button>Press</button>
<div id="host"></div>
<script>
  const root = document.getElementById('host').attachShadow({ mode: 'open' });
  root.innerHTML = '<style>.in { -webkit-user-modify: read-write; }</style><div><div class="in" aria-label="Shadow notes">in the shadow</div></div>';
</script>
</body>`;

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto' } },
    routes: (req) => {
      const path = new URL(req.url).pathname;
      const body = path === '/css-editable.html' ? PAGE : path === '/css-editable-shadow.html' ? SHADOW : null;
      return body === null ? undefined : new Response(body, { headers: { 'content-type': 'text/html' } });
    },
  });
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/css-editable.html'));
  tabId = await h.tabIdOf(page);
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

async function snapshot(args: Record<string, unknown> = {}, tab = tabId): Promise<string> {
  const r = await h.callTool('browser_snapshot', { tabId: tab, ...args });
  expect({ status: r.status, error: r.body.error }).toEqual({ status: 200, error: undefined });
  return r.body.result.snapshot as string;
}

const NAMES = ['Rich notes', 'Plain notes', 'Inline styled', 'Attribute editor', 'Media rule'];
const listed = (snap: string, name: string) => new RegExp(`textbox ${name}( = "[^\\n]*")? \\[e\\d+\\]`).test(snap);

test('the fixture: Chrome edits them but leaves them out of isContentEditable', async () => {
  const editable = await page.evaluate(() => [...document.querySelectorAll('[aria-label]')].map((e) => [e.getAttribute('aria-label'), (e as HTMLElement).isContentEditable, getComputedStyle(e).getPropertyValue('-webkit-user-modify')]));
  expect(editable).toEqual([
    ['Rich notes', false, 'read-write'],
    ['Plain notes', false, 'read-write-plaintext-only'],
    ['Inline styled', false, 'read-write'],
    ['Attribute editor', true, 'read-write'],
    ['Read only', false, 'read-only'],
    ['Media rule', false, 'read-write'],
  ]);
});

for (const interactiveOnly of [false, true]) {
  test(`browser_snapshot${interactiveOnly ? ' with interactiveOnly' : ''} lists each as a text box, not the read-only one`, async () => {
    const snap = await snapshot(interactiveOnly ? { interactiveOnly: true } : {});
    for (const name of NAMES) expect({ name, listed: listed(snap, name), snap }).toEqual({ name, listed: true, snap });
    expect(snap).not.toContain('Read only');
    // Their text is inside the text box, not a text box of its own.
    expect(snap.match(/textbox/g)?.length).toBe(NAMES.length);
  });

  test(`browser_snapshot${interactiveOnly ? ' with interactiveOnly' : ''} lists one inside an open shadow root`, async () => {
    const other = await h.context.newPage();
    await other.goto(h.fixtureUrl('/css-editable-shadow.html'));
    const snap = await snapshot(interactiveOnly ? { interactiveOnly: true } : {}, await h.tabIdOf(other));
    expect({ listed: listed(snap, 'Shadow notes'), snap }).toEqual({ listed: true, snap });
    expect(snap).toMatch(/button Press \[e\d+\]/);
    await other.close();
  });
}

test('typing into one through its ref from the interactiveOnly snapshot works', async () => {
  const snap = await snapshot({ interactiveOnly: true });
  const ref = /textbox Rich notes = [^\n]* \[(e\d+)\]/.exec(snap)![1]!;
  const r = await h.callTool('browser_type_text', { tabId, ref, text: 'typed here' });
  expect({ status: r.status, error: r.body.error }).toEqual({ status: 200, error: undefined });
  expect(await page.evaluate(() => document.querySelector('.rw')!.textContent)).toContain('typed here');
});
