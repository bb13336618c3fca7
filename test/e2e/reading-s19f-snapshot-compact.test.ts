/**
 * browser_snapshot says each thing once, in Chromium with the real extension: in a table, a
 * control whose name no text shows (an aria-label) and is the same as in the first row's same
 * place is named only there (the row's text is its context), while a name the page shows is kept
 * in every row, a later row's named control without the role word the first row gave; `text (aria-label)` is said in full once per role, text and states; a name the
 * text just before the control says is not said again on it; a container's
 * aria-label made of the words inside it is not said before them; fully transparent (opacity: 0)
 * text and links are left out, a see-through field is kept; flex and grid children read in the
 * order they are laid out (CSS order, row-reverse, column-reverse). The refs still act on the
 * right element, and with interactiveOnly (a flat list, no rows) every control keeps its name.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

const STAR = '<svg viewBox="0 0 4 4" width="16" height="16" aria-hidden="true"><path d="M0 0h4v4z"/></svg>';
const row = (who: string, starred: boolean) => `<tr>
  <td><input type="checkbox" aria-label="Select message"></td>
  <td><button aria-label="${starred ? 'Starred' : 'Not starred'}" aria-pressed="${starred}">${STAR}</button></td>
  <td>${who}</td>
  <td><label><input type="checkbox"> Done</label></td>
  <td><button>Open</button> <button aria-label="Delete">${STAR}</button></td>
</tr>`;

const PAGES: Record<string, string> = {
  '/table.html': `<!doctype html><html><head><meta charset="utf-8"><title>Table</title></head><body>
<table><tbody>${row('Alice', false)}${row('Bruno', true)}${row('Chen', false)}${row('Dana', false)}</tbody></table>
<p>Between the tables</p>
<table><tbody>${row('Emma', false)}</tbody></table>
</body></html>`,
  '/said.html': `<!doctype html><html><head><meta charset="utf-8"><title>Said</title></head><body>
<p>One <button aria-label="3 people reacted with thumbs up">👍 3</button> <button aria-label="You and 2 others reacted with thumbs up" aria-pressed="true">👍 3</button></p>
<p>Two <button aria-label="3 people reacted with thumbs up">👍 3</button> <button aria-label="You and 2 others reacted with thumbs up" aria-pressed="true">👍 3</button></p>
<p>Three <button aria-label="2 people reacted with eyes">👀 2</button> <button aria-label="Alex and Bo reacted with eyes">👀 2</button></p>
<p>Four <button aria-label="Alex and Bo reacted with eyes">👀 2</button></p>
<div id="card" role="group" tabindex="0" aria-label="Alice Moreau, 9:00: Morning!"><b>Alice Moreau</b> <i>9:00</i><p>Morning!</p></div>
<section aria-label="Billing history"><p>Your billing history is below.</p><button>Download</button></section>
<button id="who" aria-label="Sam Rivera, online">Sam Rivera · online</button>
<div><span>Desktop badge</span> <span role="switch" tabindex="0" aria-checked="true" aria-label="Desktop badge"></span></div>
<div><span>Sound</span></div><div role="switch" tabindex="0" aria-checked="false" aria-label="Sound"></div>
<div><span>Loud sound</span> <input type="checkbox" aria-label="Sound alerts"></div>
</body></html>`,
  '/see-through.html': `<!doctype html><html><head><meta charset="utf-8"><title>See-through</title>
<style>.ghost { opacity: 0; } .fancy { position: relative; } .fancy input { opacity: 0; position: absolute; inset: 0; }</style></head><body>
<h2>Title <a class="ghost" href="#t" aria-label="Permalink to Title">#</a></h2>
<div class="ghost"><p>Hover text</p><a href="#x">Hidden link</a><span style="opacity: 1">still see-through</span></div>
<label class="fancy"><input type="checkbox" id="box"> Send copies</label>
<a href="#shown">Shown link</a>
</body></html>`,
  '/order.html': `<!doctype html><html><head><meta charset="utf-8"><title>Order</title></head><body>
<div style="display: flex; flex-direction: column-reverse"><p>Message three (oldest in the markup)</p><p>Message two</p><p>Message one</p></div>
<div style="display: flex"><span style="order: 2">Right</span><span style="order: 1">Middle</span><span>Left</span></div>
<div style="display: flex; flex-direction: row-reverse"><button>Save</button><button>Cancel</button></div>
<p>After</p>
</body></html>`,
};

let h: BrowserHarness;
const tabs = new Map<string, { page: Page; tabId: number; snap: string }>();

async function snapshot(tabId: number, args: Record<string, unknown> = {}): Promise<string> {
  const r = await h.callTool('browser_snapshot', { tabId, ...args });
  expect({ status: r.status, error: r.body.error }).toEqual({ status: 200, error: undefined });
  return r.body.result.snapshot as string;
}

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto' } },
    routes: (req) => {
      const body = PAGES[new URL(req.url).pathname];
      return body ? new Response(body, { headers: { 'content-type': 'text/html; charset=utf-8' } }) : undefined;
    },
  });
  for (const path of Object.keys(PAGES)) {
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl(path));
    const tabId = await h.tabIdOf(page);
    tabs.set(path, { page, tabId, snap: await snapshot(tabId) });
  }
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

const lineOf = (snap: string, text: string) => snap.split('\n').find((l) => l.includes(text)) ?? `(no line with ${text})`;

test('a table names a control its text does not show once per place: the first row says it, the rows after it only differing names, without the role word', () => {
  const { snap } = tabs.get('/table.html')!;
  expect(lineOf(snap, 'Alice')).toMatch(/^\[ \] Select message \[e\d+\]\tbutton Not starred \[e\d+\]\tAlice\t\[ \] Done \[e\d+\]\tbutton Open \[e\d+\] button Delete \[e\d+\]$/);
  // A name that differs from the first row's at that place is said; "Done" and "Open" are shown text, kept in every row.
  // A named control there leaves out the role word the first row gave; a nameless one keeps it.
  expect(lineOf(snap, 'Bruno')).toMatch(/^\[ \] \[e\d+\]\tStarred \(pressed\) \[e\d+\]\tBruno\t\[ \] Done \[e\d+\]\tOpen \[e\d+\] button \[e\d+\]$/);
  expect(lineOf(snap, 'Chen')).toMatch(/^\[ \] \[e\d+\]\tbutton \[e\d+\]\tChen\t\[ \] Done \[e\d+\]\tOpen \[e\d+\] button \[e\d+\]$/);
  // Another table starts again: its first row names its controls.
  expect(lineOf(snap, 'Emma')).toMatch(/^\[ \] Select message \[e\d+\]\tbutton Not starred \[e\d+\]\tEmma\t/);
  expect(snap.split('Select message').length - 1).toBe(2);
});

test('a control named only in the first row is still the right one: its ref acts on its own row, and interactiveOnly names every control', async () => {
  const { page, tabId, snap } = tabs.get('/table.html')!;
  const ref = /^\[ \] \[(e\d+)\]\tbutton \[e\d+\]\tChen\t/m.exec(snap)![1]!;
  const r = await h.callTool('browser_click_element', { tabId, ref });
  expect({ status: r.status, error: r.body.error }).toEqual({ status: 200, error: undefined });
  expect(await page.evaluate(() => [...document.querySelectorAll('tr')].map((tr) => (tr.querySelector('input[aria-label]') as HTMLInputElement).checked))).toEqual([false, false, true, false, false]);
  const flat = await snapshot(tabId, { interactiveOnly: true });
  expect(flat.split('\n').filter((l) => l.startsWith('[x] Select message') || l.startsWith('[ ] Select message')).length).toBe(5);
  expect(flat).toContain(`[x] Select message [${ref}]`);
  expect(flat.split('\n').filter((l) => /^button Delete \[e\d+\]$/.test(l)).length).toBe(5);
});

test('text (aria-label) is said in full once per role, text and states; a text that goes with several labels keeps them all', () => {
  const { snap } = tabs.get('/said.html')!;
  expect(lineOf(snap, 'One')).toMatch(/^One button 👍 3 \(3 people reacted with thumbs up\) \[e\d+\] 👍 3 \(You and 2 others reacted with thumbs up\) \(pressed\) \[e\d+\]$/);
  expect(lineOf(snap, 'Two')).toMatch(/^Two button 👍 3 \[e\d+\] 👍 3 \(pressed\) \[e\d+\]$/);
  // 👀 2 unpressed goes with two labels: neither is left out.
  expect(lineOf(snap, 'Three')).toMatch(/^Three button 👀 2 \(2 people reacted with eyes\) \[e\d+\] 👀 2 \(Alex and Bo reacted with eyes\) \[e\d+\]$/);
  expect(lineOf(snap, 'Four')).toMatch(/^Four button 👀 2 \(Alex and Bo reacted with eyes\) \[e\d+\]$/);
});

test('an aria-label made of the words shown inside is not said again: on a focusable container, a region and a button', () => {
  const { snap } = tabs.get('/said.html')!;
  expect(snap).toMatch(/^group Alice Moreau 9:00 Morning! \[e\d+\]$/m);
  expect(snap).not.toContain('Alice Moreau, 9:00');
  expect(snap).toMatch(/^region:\nYour billing history is below\.\nbutton Download \[e\d+\]$/m);
  expect(snap).toMatch(/^button Sam Rivera · online \[e\d+\]$/m);
  expect(snap).not.toContain('Sam Rivera, online');
});

test('a shown text just before a control that an aria-label names the same is said once, before it', () => {
  const { snap } = tabs.get('/said.html')!;
  expect(snap).toMatch(/^Desktop badge \[x\] \[e\d+\]$/m);
  expect(snap).toMatch(/^Sound\n\[ \] \[e\d+\]$/m);
  // A name that says more than the text before it keeps it.
  expect(snap).toMatch(/^Loud sound\n\[ \] Sound alerts \[e\d+\]$/m);
});

test('opacity 0 hides text and links (a hover-only permalink too); a see-through checkbox over its drawn one stays listed and clickable', async () => {
  const { page, tabId, snap } = tabs.get('/see-through.html')!;
  expect(snap).toMatch(/^## Title$/m);
  for (const hidden of ['Permalink', 'Hover text', 'Hidden link', 'still see-through']) expect({ hidden, shown: snap.includes(hidden) }).toEqual({ hidden, shown: false });
  expect(snap).toMatch(/^\[Shown link\]\(e\d+\)$/m);
  const ref = /\[ \] Send copies \[(e\d+)\]/.exec(snap)?.[1];
  expect(ref).toBeDefined();
  const r = await h.callTool('browser_click_element', { tabId, ref });
  expect({ status: r.status, error: r.body.error }).toEqual({ status: 200, error: undefined });
  expect(await page.evaluate(() => (document.getElementById('box') as HTMLInputElement).checked)).toBe(true);
});

test('flex and grid children read in the order they are laid out: column-reverse, CSS order, row-reverse', () => {
  const { snap } = tabs.get('/order.html')!;
  expect(snap).toContain('Message one\nMessage two\nMessage three (oldest in the markup)');
  expect(snap).toContain('Left\nMiddle\nRight');
  expect(snap).toMatch(/^button Cancel \[e\d+\]\nSave \[e\d+\]$/m);
  expect(snap.trimEnd().endsWith('After')).toBe(true);
});
