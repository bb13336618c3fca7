/**
 * browser_snapshot says a control's kind once where its neighbours show it, in Chromium with the
 * real extension: a control right after one with the same role word, nothing shown between
 * (buttons side by side, a toolbar, tabs, a listbox's options), leaves the role word out; a field
 * (text box, select, slider) always says its kind; text, a heading, a list item or a landmark
 * between two controls keeps it; interactiveOnly keeps every role word. In a later table row, a
 * control's aria-label made of its text and words the row or the header row shows is said as its
 * text (the first row says it whole; a first row of data is no context). A combobox says (expanded) when open, nothing when
 * closed. An unnamed form is no landmark (as in ARIA): no `form:` line, its content not indented.
 * Every control keeps its ref, and the refs act on the right element.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

const PAGES: Record<string, string> = {
  '/toolbar.html': `<!doctype html><html><head><title>Toolbar</title></head><body>
<div id="bar"><button>Bold</button><button aria-pressed="true">Italic</button><button>Underline</button></div>
<p>Between <button>One</button> text <button>Two</button></p>
<div role="tablist"><button role="tab" aria-selected="true">Day</button><button role="tab">Week</button></div>
<div><button>Apply</button><a href="#help">Help</a><button>Reset</button></div>
<h2>Heading</h2>
<button>After heading</button>
<ul><li><button>First item</button></li><li><button>Second item</button></li></ul>
<nav aria-label="Pager"><button>Newer</button><button>Older</button></nav>
<button>Outside</button>
<label>First name <input id="first"></label>
<label>Last name <input id="last"></label>
<input type="range" aria-label="Volume" value="30"><input type="range" aria-label="Balance" value="50">
<div role="combobox" aria-label="Size" aria-expanded="false" tabindex="0">Medium</div>
<div role="combobox" aria-label="Colour" aria-expanded="true" tabindex="0">Red</div>
<div role="listbox"><div role="option" aria-selected="true" tabindex="-1">Red</div><div role="option" tabindex="-1">Green</div></div>
<select aria-label="Unit"><option>cm</option><option selected>in</option></select>
<script>
window.__clicked = [];
for (const b of document.querySelectorAll('button')) b.addEventListener('click', () => window.__clicked.push(b.textContent));
</script>
</body></html>`,
  '/forms.html': `<!doctype html><html><head><title>Forms</title></head><body>
<main>
<h1>Contact</h1>
<form onsubmit="event.preventDefault(); window.__sent = document.getElementById('email').value"><label>Email <input id="email"></label><button>Send</button></form>
<p>After the form</p>
<form aria-label="Search the site"><input aria-label="Query"><button>Go</button></form>
<form aria-labelledby="nl-h"><h2 id="nl-h">Newsletter</h2><input aria-label="Address"></form>
</main>
</body></html>`,
  '/orders.html': `<!doctype html><html><head><title>Orders</title></head><body>
<table>
<thead><tr><th>Order</th><th>Customer</th><th>Actions</th></tr></thead>
<tbody>
<tr><td>#101</td><td>Northwind</td><td><button aria-label="Open order #101">Open</button> <button aria-label="Refund Northwind now">Refund</button></td></tr>
<tr><td>#102</td><td>Contoso</td><td><button aria-label="Open order #102">Open</button> <button aria-label="Refund Contoso now">Refund</button></td></tr>
<tr><td>#103</td><td>Fabrikam</td><td><button aria-label="Open order #103 in a new window">Open</button> <button aria-label="Refund Fabrikam now">Refund</button></td></tr>
</tbody>
</table>
<table>
<tr><td>Alpha</td><td><button aria-label="Archive Alpha">Archive</button></td></tr>
<tr><td>Beta</td><td><button aria-label="Archive Alpha">Archive</button></td></tr>
</table>
<script>
window.__opened = [];
for (const b of document.querySelectorAll('button')) b.addEventListener('click', () => window.__opened.push(b.getAttribute('aria-label')));
</script>
</body></html>`,
};

let h: BrowserHarness;
const tabs = new Map<string, { page: Page; tabId: number; snap: string }>();

async function snapshot(tabId: number, args: Record<string, unknown> = {}): Promise<string> {
  const r = await h.callTool('browser_snapshot', { tabId, ...args });
  expect({ status: r.status, error: r.body.error }).toEqual({ status: 200, error: undefined });
  return r.body.result.snapshot as string;
}

const refOn = (snap: string, re: RegExp): string => {
  const m = re.exec(snap);
  if (!m) throw new Error(`no line matches ${re} in:\n${snap}`);
  return /\[(e\d+)\]/.exec(m[0])![1]!;
};

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

test('a control right after one with the same role word leaves it out; text, a heading, a list item, a landmark or another kind between keeps it', () => {
  const { snap } = tabs.get('/toolbar.html')!;
  for (const line of [
    /^button Bold \[e\d+\] Italic \(pressed\) \[e\d+\] Underline \[e\d+\]$/m,
    /^Between button One \[e\d+\] text button Two \[e\d+\]$/m,
    /^tab Day \(selected\) \[e\d+\] Week \[e\d+\]$/m,
    /^button Apply \[e\d+\] \[Help\]\(e\d+\) button Reset \[e\d+\]$/m,
    /^## Heading\nbutton After heading \[e\d+\]$/m,
    /^- button First item \[e\d+\]\n- button Second item \[e\d+\]$/m,
    /^nav Pager: button Newer \[e\d+\] Older \[e\d+\]\nbutton Outside \[e\d+\]$/m,
  ]) expect(snap).toMatch(line);
  // The first of a listbox's options says its role; the next one leaves it out.
  expect(snap).toMatch(/^option Red \(selected\) \[e\d+\]\nGreen \[e\d+\]$/m);
});

test('a field always says its kind, even right after another of the same kind', () => {
  const { snap } = tabs.get('/toolbar.html')!;
  expect(snap).toMatch(/^textbox First name \[e\d+\]\ntextbox Last name \[e\d+\]$/m);
  expect(snap).toMatch(/^slider Volume = "30" \[e\d+\]\nslider Balance = "50" \[e\d+\]$/m);
  expect(snap).toMatch(/^select Unit = "in" \(cm \| in\) \[e\d+\]$/m);
});

test('a combobox says (expanded) when open and nothing when closed; a button keeps (collapsed)', async () => {
  const { snap } = tabs.get('/toolbar.html')!;
  expect(snap).toMatch(/^select Size = "Medium" \[e\d+\]$/m);
  expect(snap).toMatch(/^select Colour = "Red" \(expanded\) \[e\d+\]$/m);
  expect(snap).not.toContain('Size = "Medium" (collapsed)');
  const { page, tabId } = tabs.get('/toolbar.html')!;
  await page.evaluate(() => document.body.insertAdjacentHTML('afterbegin', '<button aria-expanded="false">Menu</button><p>x</p>'));
  expect(await snapshot(tabId)).toMatch(/^button Menu \(collapsed\) \[e\d+\]$/m);
});

test('the refs of controls written without their role word click the right element; interactiveOnly keeps every role word', async () => {
  const { page, tabId, snap } = tabs.get('/toolbar.html')!;
  for (const re of [/ Underline \[e\d+\]$/m, / Week \[e\d+\]$/m, / Older \[e\d+\]$/m]) {
    const r = await h.callTool('browser_click_element', { tabId, ref: refOn(snap, re) });
    expect({ status: r.status, error: r.body.error }).toEqual({ status: 200, error: undefined });
  }
  expect(await page.evaluate(() => (window as unknown as { __clicked: string[] }).__clicked)).toEqual(['Underline', 'Week', 'Older']);
  const flat = await snapshot(tabId, { interactiveOnly: true });
  for (const line of [/^button Italic \(pressed\) \[e\d+\]$/m, /^button Underline \[e\d+\]$/m, /^tab Week \[e\d+\]$/m, /^option Green \[e\d+\]$/m]) expect(flat).toMatch(line);
});

test('a later row says a control by its text when its aria-label adds only words the row or the header row shows; the first row says it whole', async () => {
  const { page, tabId, snap } = tabs.get('/orders.html')!;
  expect(snap).toMatch(/^#101\tNorthwind\tbutton Open order #101 \[e\d+\] button Refund Northwind now \[e\d+\]$/m);
  // "order" is a column header, "#102" the row's first cell: said as its text, without the role word.
  expect(snap).toMatch(/^#102\tContoso\tOpen \[e\d+\] Refund Contoso now \[e\d+\]$/m);
  // Words neither the row nor the headers show keep the whole name ("in a new window", "now").
  expect(snap).toMatch(/^#103\tFabrikam\tOpen order #103 in a new window \[e\d+\] Refund Fabrikam now \[e\d+\]$/m);
  // A first row that is no header row is no context for the rows after it: "Alpha" is not Beta's.
  expect(snap).toMatch(/^Alpha\tbutton Archive Alpha \[e\d+\]\nBeta\tArchive Alpha \[e\d+\]$/m);
  const r = await h.callTool('browser_click_element', { tabId, ref: refOn(snap, /^#102\tContoso\tOpen \[e\d+\]/m) });
  expect({ status: r.status, error: r.body.error }).toEqual({ status: 200, error: undefined });
  expect(await page.evaluate(() => (window as unknown as { __opened: string[] }).__opened)).toEqual(['Open order #102']);
  // interactiveOnly (no rows) names each in full.
  expect(await snapshot(tabId, { interactiveOnly: true })).toContain('button Open order #102 [');
});

test('an unnamed form is no landmark: its fields are read in place, not under a form: line; a named form keeps its line', async () => {
  const { page, tabId, snap } = tabs.get('/forms.html')!;
  expect(snap).toMatch(/^# Contact\ntextbox Email \[e\d+\]\nbutton Send \[e\d+\]\nAfter the form\nform Search the site:\n {2}textbox Query \[e\d+\]\n {2}button Go \[e\d+\]\nform:\n {2}## Newsletter\n {2}textbox Address \[e\d+\]$/m);
  // The fields of the unnamed form still act, and its button submits it.
  const t = await h.callTool('browser_type_text', { tabId, ref: /textbox Email \[(e\d+)\]/.exec(snap)![1], text: 'a@b.c' });
  expect({ status: t.status, error: t.body.error }).toEqual({ status: 200, error: undefined });
  const c = await h.callTool('browser_click_element', { tabId, ref: /button Send \[(e\d+)\]/.exec(snap)![1] });
  expect({ status: c.status, error: c.body.error }).toEqual({ status: 200, error: undefined });
  expect(await page.evaluate(() => (window as unknown as { __sent?: string }).__sent)).toBe('a@b.c');
});
