/**
 * browser_snapshot on pages shaped like the apps people work in (test/fixtures/pages/app-*.html:
 * an inbox, a settings page, a docs page, a dashboard built from web components, a chat app), in
 * Chromium with the real extension. On each: every visible text is there (shadow trees and
 * slotted content too, code indentation kept), nothing hidden is, every control that is shown has
 * a ref with its name and state, no label is said twice, and the refs click and type. Covered
 * on the way: content and names inside shadow trees (closed ones too), aria-labelledby inside a shadow root, a host
 * marked hidden that its component shows, a part made visible inside visibility: hidden, custom
 * comboboxes, text boxes and sliders (label as name, text as value), controls disabled by their
 * fieldset, mixed/pressed/current/invalid/inert states, progress bars' values, a CSS-only toggle (checkbox display:none, its
 * label clicked) and table rows that can be clicked.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);
let h: BrowserHarness;
const pages = new Map<string, { page: Page; tabId: number; snap: string }>();

const APPS = ['app-inbox.html', 'app-settings.html', 'app-docs.html', 'app-dashboard.html', 'app-chat.html'];

beforeAll(async () => {
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
  for (const name of APPS) {
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl(`/pages/${name}`));
    const tabId = await h.tabIdOf(page);
    pages.set(name, { page, tabId, snap: await snapshot(tabId) });
  }
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

async function snapshot(tabId: number): Promise<string> {
  const r = await h.callTool('browser_snapshot', { tabId });
  expect({ status: r.status, error: r.body.error }).toEqual({ status: 200, error: undefined });
  return r.body.result.snapshot as string;
}

/**
 * Every text node the page shows, squashed, in the order it renders: through open shadow roots
 * and slots, only in elements that are rendered and not fully transparent (checkVisibility), select options left out.
 */
async function visibleTexts(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    const visit = (n: Node) => {
      if (n.nodeType === Node.TEXT_NODE) {
        const t = (n.textContent ?? '').replace(/\s+/g, ' ').trim();
        const parent = n.parentElement!;
        if (t && !['OPTION', 'SCRIPT', 'STYLE', 'TEMPLATE'].includes(parent.tagName) && parent.checkVisibility({ visibilityProperty: true, opacityProperty: true })) out.push(t);
        return;
      }
      if (!(n instanceof Element) && !(n instanceof ShadowRoot) && !(n instanceof Document)) return;
      if (n instanceof Element && ['SCRIPT', 'STYLE', 'TEMPLATE', 'HEAD'].includes(n.tagName)) return;
      const assigned = n instanceof HTMLSlotElement ? n.assignedNodes({ flatten: true }) : [];
      const kids = n instanceof Element && n.shadowRoot ? n.shadowRoot.childNodes : assigned.length ? assigned : n.childNodes;
      for (const c of kids) visit(c);
    };
    visit(document.body);
    return out;
  });
}

/**
 * The controls the page shows (as the snapshot's refs should list them), through shadow roots; a
 * label whose checkbox or radio is not rendered is that control.
 */
async function shownControls(page: Page): Promise<number> {
  return page.evaluate(() => {
    const sel = 'a[href],button,input:not([type=hidden]),select,textarea,summary,[contenteditable=true],[tabindex]:not([tabindex="-1"]),[role=button],[role=link],[role=checkbox],[role=radio],[role=switch],[role=tab],[role=option],[role=combobox],[role=slider],[role=textbox],[role=menuitem]';
    let n = 0;
    const visit = (root: Document | ShadowRoot) => {
      for (const e of root.querySelectorAll('*')) {
        const toggle = e instanceof HTMLLabelElement && e.control instanceof HTMLInputElement && ['checkbox', 'radio'].includes(e.control.type) && !e.control.checkVisibility();
        // Fully transparent (opacity 0) counts as not shown, but for a field (a see-through checkbox takes the click).
        const field = e instanceof HTMLInputElement || e instanceof HTMLSelectElement || e instanceof HTMLTextAreaElement;
        if ((e.matches(sel) || toggle) && e.checkVisibility({ visibilityProperty: true, opacityProperty: !field }) && !e.closest('[aria-hidden=true]')) n++;
        if (e.shadowRoot) visit(e.shadowRoot);
      }
    };
    visit(document);
    // Closed shadow roots the dashboard keeps on window for this count.
    for (const r of (window as any).__closedRoots ?? []) visit(r);
    return n;
  });
}

const refs = (snap: string) => [...snap.matchAll(/\]\(((?:f\d+)?e\d+)\)|\[((?:f\d+)?e\d+)\]/g)].map((m) => m[1] ?? m[2]!);
const count = (snap: string, s: string) => snap.split(s).length - 1;
const refOn = (snap: string, line: RegExp) => {
  const m = line.exec(snap);
  if (!m) throw new Error(`no line matches ${line} in:\n${snap}`);
  return /\[(e\d+)\]$|\]\((e\d+)\)/.exec(m[0])!.slice(1).find(Boolean)!;
};

test('every visible text of each app page is in its snapshot, and every shown control has one ref', async () => {
  for (const name of APPS) {
    const { page, snap } = pages.get(name)!;
    const texts = await visibleTexts(page);
    expect(texts.length).toBeGreaterThan(20);
    const missing = texts.filter((t) => !snap.replace(/\s+/g, ' ').includes(t));
    expect({ name, missing }).toEqual({ name, missing: [] });
    const ids = refs(snap);
    expect({ name, unique: new Set(ids).size }).toEqual({ name, unique: ids.length });
    expect({ name, refs: ids.length }).toEqual({ name, refs: await shownControls(page) });
  }
});

test('nothing hidden is shown: hidden, aria-hidden, display:none, visibility:hidden, closed <details>, hidden="until-found", unslotted', async () => {
  const hidden: Record<string, string[]> = {
    'app-inbox.html': ['Old stuff', 'Mark all as read', 'Press ? for shortcuts', 'Has attachment'],
    'app-settings.html': ['(UTC−08:00) Pacific Time', 'Saved', 'API base URL', 'Only change this if support asked you to', 'Delete for good'],
    'app-docs.html': ['Printed from docs.widget.dev', 'pnpm add @widget/sdk', 'Secret material ends up in bundles', 'Search-only text'],
    'app-dashboard.html': ['Refunds', 'internal: cache hit', 'Old alert', 'goes to no slot'],
    'app-chat.html': ['Add reaction', 'Reply in thread', 'More actions', 'Message actions'],
  };
  for (const [name, texts] of Object.entries(hidden)) {
    const { snap } = pages.get(name)!;
    for (const t of texts) expect({ name, t, shown: snap.includes(t) }).toEqual({ name, t, shown: false });
  }
  // Offscreen but rendered is visible; so is a part made visible again inside visibility: hidden.
  expect(pages.get('app-chat.html')!.snap).toContain('End of messages.');
  expect(pages.get('app-chat.html')!.snap).toMatch(/^Good call\. Moving the canary to 14:10\.\n📌 Pinned by Sam$/m);
});

test('interactiveOnly lists the shown controls of each page, none inside a closed <details>', async () => {
  for (const name of APPS) {
    const { page, tabId } = pages.get(name)!;
    const r = await h.callTool('browser_snapshot', { tabId, interactiveOnly: true });
    expect({ status: r.status, error: r.body.error }).toEqual({ status: 200, error: undefined });
    const snap = r.body.result.snapshot as string;
    expect({ name, refs: refs(snap).length }).toEqual({ name, refs: await shownControls(page) });
    if (name === 'app-settings.html') {
      expect(snap).toMatch(/^button Advanced \(collapsed\) \[e\d+\]$/m);
      expect(snap).not.toContain('API base URL');
    }
  }
});

test('inbox: the toolbar of icon-only buttons, the search box and each row with its checkbox, star, sender, subject, snippet and date', () => {
  const { snap } = pages.get('app-inbox.html')!;
  expect(snap).toMatch(/^ {2}searchbox Search mail \[e\d+\]$/m);
  expect(snap).toMatch(/^\[-\] Select all \[e\d+\]$/m); // aria-checked="mixed"
  // A control right after one with the same role word leaves it out (the toolbar's first says it).
  expect(snap).toMatch(/^button Refresh \[e\d+\]\nMore \(collapsed\) \[e\d+\]\nArchive \(disabled\) \[e\d+\]$/m);
  expect(snap).toMatch(/^- \[Inbox 12\]\(e\d+\) \(current\)$/m);
  expect(snap).toMatch(/tab Primary \(selected\) \[e\d+\] Promotions 4 new \[e\d+\]/);
  // The checkbox and star (named only by aria-label) are named in the first row; a row after it
  // names them only where the name differs (Starred, without the role word the first row gave):
  // the row's text is their context.
  expect(snap).toMatch(/^\[x\] \[e\d+\]\tbutton \[e\d+\]\tElif Yilmaz\t\[Your flight to Lisbon is confirmed — Booking reference K7Q2ZP\. [^\n]*…\]\(e\d+\)\t\tNov 2$/m);
  expect(snap).toMatch(/^\[ \] \[e\d+\]\tStarred \(pressed\) \[e\d+\]\tBruno Keller\t/m);
  expect(count(snap, 'Select conversation')).toBe(1);
  // Label chips (inline boxes side by side, no space between them in the HTML) read as two words.
  expect(snap).toMatch(/^\[ \] Select conversation \[e\d+\]\tbutton Not starred \[e\d+\]\tAlice Moreau\tClients Finance \[Q3 budget review — /m);
});

test('settings: fieldsets, labelled fields with help text, switches, radio groups, a disabled fieldset and custom comboboxes, each label said once', () => {
  const { snap } = pages.get('app-settings.html')!;
  for (const line of [
    /^textbox Full name \* = "Sam Rivera" \[e\d+\]\nShown on your profile and in mentions\.$/m,
    /^email Email address \* = "sam@example" \(invalid\) \[e\d+\]$/m,
    /^textbox Username = "samr" \(disabled\) \[e\d+\]$/m,
    // A custom combobox: named by its label, its text is its value.
    // A combobox is closed unless it says (expanded); a field says its kind even after another.
    /^select Time zone = "\(UTC\+01:00\) Berlin, Paris" \[e\d+\]$/m,
    /^select Language = "English \(UK\)" \(expanded\) \[e\d+\]\noption English \(US\) \[e\d+\]\nEnglish \(UK\) \(selected\) \[e\d+\]/m,
    /^Deutsch \(coming soon\) \(disabled\) \[e\d+\]$/m,
    /^\[x\] Email notifications \[e\d+\]$/m,
    /^\[ \] Push notifications \[e\d+\]$/m,
    /^\(x\) Weekly \[e\d+\]$/m,
    /^\(x\) Dark \[e\d+\]$/m,
    /^slider Notification volume = "40" \[e\d+\]$/m,
    /^slider Quiet hours start = "22:00" \[e\d+\]$/m,
    // Inside <fieldset disabled> every control is disabled, though none has the attribute.
    /^textbox Workspace name = "Acme Inc\." \(disabled\) \[e\d+\]$/m,
    /^\[x\] Allow guests \(disabled\) \[e\d+\]$/m,
    /^button Transfer ownership \(disabled\) \[e\d+\]$/m,
    /^\[Profile\]\(e\d+\) \(current\)$/m,
    // A CSS-only toggle: its checkbox is display:none, its label is what is clicked.
    /^\[x\] Compact mode \[e\d+\]$/m,
    // A shown text just before a switch that an aria-label names the same: said once, before it.
    /^Desktop badge\n\[ \] \(disabled\) \[e\d+\]$/m,
    // Rows that can be clicked keep their cells.
    /^Device\tLocation\tLast active\tActions\nrow \(selected\) \[e\d+\] Chrome on Linux\tPorto\tNow\tbutton Revoke \[e\d+\]\nrow \[e\d+\] Safari on iPhone\tLisbon\t2 days ago\tRevoke \[e\d+\]$/m,
  ]) expect(snap).toMatch(line);
  // A label named through aria-labelledby is said once, on its control; so is a landmark's heading.
  for (const t of ['Time zone', 'Language', 'Email notifications', 'Push notifications', 'Quiet hours start', 'Danger zone', 'Full name', 'Desktop badge']) expect({ t, times: count(snap, t) }).toEqual({ t, times: 1 });
  expect(snap).toMatch(/^region:\n {2}## Danger zone$/m);
  // A radio group's label names no single control: it stays.
  expect(snap).toMatch(/^Digest frequency\n\( \) Daily \[e\d+\]$/m);
});

test('docs: code indentation, nested lists, a table with headers, open and closed <details>, footnote links', () => {
  const { snap } = pages.get('app-docs.html')!;
  expect(snap).toContain([
    '```',
    "import { defineConfig } from '@widget/sdk';",
    '',
    'export default defineConfig({',
    "  region: 'eu-west-1',",
    '  retries: {',
    '    max: 3,',
    '    backoff: { initialMs: 200, factor: 2 },  // 200, 400, 800 ms',
    '  },',
  ].join('\n'));
  expect(snap).toContain('```\nconst client = createClient({\n\tregion: \'eu-west-1\',\n\ttimeoutMs: 5000,\n});\n```');
  expect(snap).toContain('2. For nested options, join with a double underscore:\n  - WIDGET_RETRIES__MAX=5\n  - WIDGET_RETRIES__BACKOFF__FACTOR=1.5\n3. Restart the process');
  expect(snap).toContain('  ```\n  $ export WIDGET_REGION=eu-west-1\n  $ node server.js\n    widget: region eu-west-1 (from env)\n  ```');
  expect(snap).toContain('Option\tType\tDefault\tDescription\nregion\tstring\t\'us-east-1\'\tWhere requests are sent. See [regions](');
  expect(snap).toMatch(/^ {4}- \[OAuth 2\.0\]\(e\d+\)$/m);
  expect(snap).toMatch(/^ {2}- \[Configuring the client\]\(e\d+\) \(current\)$/m);
  expect(snap).toMatch(/^button Why not read \.env files\? \(collapsed\) \[e\d+\]$/m);
  expect(snap).toMatch(/^button Why not read \.env files\? \(collapsed\) \[e\d+\]\nUsing the client in the browser \(expanded\) \[e\d+\]\nIn a browser only region/m);
  expect(snap).toMatch(/createClient\(\)\.\[1\]\(e\d+\) Later sources win\./);
  expect(snap).toMatch(/^1\. Since v4\.0; earlier versions read only the file\. \[↩ \(Back to reference 1\)\]\(e\d+\)$/m);
  expect(snap).toMatch(/^tab npm \(selected\) \[e\d+\] pnpm \[e\d+\]$/m);
  // A landmark named by its own heading or first line does not repeat it.
  for (const t of ['Footnotes', 'On this page']) expect({ t, times: count(snap, t) }).toEqual({ t, times: 1 });
});

test('dashboard of web components: shadow trees and slots read in place; controls inside them named, with refs that act', async () => {
  const { page, tabId, snap } = pages.get('app-dashboard.html')!;
  for (const line of [
    /^button Notifications \[e\d+\] Help \[e\d+\] \[Sam Rivera\]\(e\d+\)$/m,
    /^\[Overview\]\(e\d+\) \(current\)$/m,
    /^tab 7 days \[e\d+\] 30 days \(selected\) \[e\d+\] 90 days \[e\d+\]$/m,
    /^Conversion\n2\.9%\n−0\.4 pts vs last period\nSampled: 10% of sessions$/m,
    // Marked hidden, but the component's :host { display: block } shows it: it is on screen.
    /^Returns\n312\n\+28 vs last period\nUpdated just now$/m,
    /^ {2}searchbox Filter orders \[e\d+\]$/m,
    /^ {2}#10234\tNorthwind Traders\t\$1,240\.00\tPaid\tbutton Open order #10234 \[e\d+\]$/m,
    // A later row's button: its role word is the first row's at that place; its aria-label,
    // its text and words the row and the column headers show, is said as its text.
    /^ {2}#10233\tContoso Ltd\t\$89\.90\tRefunded\tOpen \[e\d+\]$/m,
    // A focusable host whose shadow tree holds a heading, text and a button: all of it is shown.
    /^clickable \[e\d+\]\n### Canvas tote\nOut of stock since Oct 30\nbutton Restock \[e\d+\]$/m,
    // A host that is a button, its label in its shadow tree.
    /^button Restock \[e\d+\]\nExport CSV \[e\d+\]$/m,
    /^- Canvas tote — 0 left \[View product\]\(e\d+\)$/m,
    // Named through aria-labelledby inside the shadow root.
    /^\[x\] Auto-refresh \[e\d+\]$/m,
    // A closed shadow root is read too (through chrome.dom); the host's unslotted child is not shown.
    /^Need help\? Ask Priya from the support team\nbutton Chat with support \[e\d+\]$/m,
  ]) expect(snap).toMatch(line);
  expect(snap).not.toContain('Not slotted');
  // A progress bar says its value, named by its label (said once).
  expect(snap).toMatch(/^progress Monthly revenue goal = "72%"$/m);
  expect(count(snap, 'Monthly revenue goal')).toBe(1);
  expect(count(snap, 'Auto-refresh')).toBe(1);
  expect(count(snap, 'Recent orders')).toBe(1);

  const click = async (ref: string) => {
    const r = await h.callTool('browser_click_element', { tabId, ref });
    expect({ status: r.status, error: r.body.error }).toEqual({ status: 200, error: undefined });
  };
  await click(refOn(snap, /^button Notifications \[e\d+\]/m));
  await click(refOn(snap, /^button Restock \[e\d+\]$/m));
  await click(refOn(snap, /^button Chat with support \[e\d+\]$/m));
  expect(await page.evaluate(() => [(window as any).__clicks, (window as any).__restock, (window as any).__support])).toEqual([['Notifications'], 1, 1]);
  const r = await h.callTool('browser_type_text', { tabId, ref: refOn(snap, /searchbox Filter orders \[e\d+\]$/m), text: 'Contoso' });
  expect({ status: r.status, error: r.body.error }).toEqual({ status: 200, error: undefined });
  expect(await page.evaluate(() => (window as any).__filter)).toBe('Contoso');
});

test('chat: the scrolling message list read in order, buttons inside messages with their state, the composer as a text box with its text as its value', async () => {
  const { page, tabId, snap } = pages.get('app-chat.html')!;
  expect(snap).toMatch(/^\[Bruno Keller\]\(e\d+\) 9:07\nYes — staging looks green\. I will start the canary at 13:45\.\nbutton 👍 3 \(You and 2 others reacted with thumbs up\) \(pressed\) \[e\d+\] 👀 1 \(1 person reacted with eyes\) \[e\d+\]$/m);
  expect(snap).toMatch(/^button 2 replies \(collapsed\) \[e\d+\]$/m);
  expect(snap).toContain('```\nSELECT count(*)\n  FROM orders\n WHERE created_at > now() - interval \'1 day\';\n```');
  expect(snap).toMatch(/^button Bold \(pressed\) \[e\d+\]\nItalic \[e\d+\]$/m);
  expect(snap).toMatch(/^textbox Message #deploys = "Sounds good, I will watch the dashboards during the canary" \[e\d+\]$/m);
  // A <progress>: its value, named by its label; its fallback content is not on screen.
  expect(snap).toMatch(/^progress Uploading deploy-plan\.pdf = "64%" button ✕ \(Cancel upload\) \[e\d+\]$/m);
  expect(count(snap, 'Uploading deploy-plan.pdf')).toBe(1);
  // Messages in page order, the last one at the bottom of a list scrolled to its top.
  const order = ['9:00', '9:07', '13:23', 'End of messages.', 'Chen Wei is typing…'].map((t) => snap.indexOf(t));
  expect(order).toEqual([...order].sort((a, b) => a - b));

  const composer = refOn(snap, /^textbox Message #deploys = [^\n]*\[e\d+\]$/m);
  const r = await h.callTool('browser_type_text', { tabId, ref: composer, text: 'Canary is at 25 %' });
  expect({ status: r.status, error: r.body.error }).toEqual({ status: 200, error: undefined });
  const c = await h.callTool('browser_click_element', { tabId, ref: refOn(snap, /^Send now \[e\d+\]$/m) });
  expect({ status: c.status, error: c.body.error }).toEqual({ status: 200, error: undefined });
  expect(await page.evaluate(() => [document.querySelector('.editor')!.textContent, (window as any).__sent])).toEqual(['Canary is at 25 %', 1]);
  expect(await snapshot(tabId)).toContain(`textbox Message #deploys = "Canary is at 25 %" [${composer}]`);
});

test('settings: a switch, a custom option and a CSS-only toggle act through their refs, and the next snapshot shows the new state', async () => {
  const { page, tabId, snap } = pages.get('app-settings.html')!;
  await page.evaluate(() => {
    for (const el of document.querySelectorAll('[role=switch]:not(input), [role=option]')) {
      el.addEventListener('click', () => {
        if (el.getAttribute('role') === 'switch') el.setAttribute('aria-checked', String(el.getAttribute('aria-checked') !== 'true'));
        else for (const o of el.parentElement!.children) o.setAttribute('aria-selected', String(o === el));
      });
    }
  });
  for (const ref of [refOn(snap, /\[ \] Push notifications \[e\d+\]$/m), refOn(snap, /^Português \[e\d+\]$/m), refOn(snap, /\[x\] Compact mode \[e\d+\]$/m)]) {
    const r = await h.callTool('browser_click_element', { tabId, ref });
    expect({ status: r.status, error: r.body.error }).toEqual({ status: 200, error: undefined });
  }
  const after = await snapshot(tabId);
  expect(after).toMatch(/^\[x\] Push notifications \[e\d+\]$/m);
  expect(after).toMatch(/^Português \(selected\) \[e\d+\]$/m);
  expect(after).toMatch(/^\[ \] Compact mode \[e\d+\]$/m);
  expect(await page.evaluate(() => (document.getElementById('compact') as HTMLInputElement).checked)).toBe(false);
});

test('settings: with a modal dialog open, the controls behind it say (inert); the controls in the dialog act and close it', async () => {
  const { page, tabId, snap } = pages.get('app-settings.html')!;
  expect(snap).not.toContain('(inert)');
  const open = await h.callTool('browser_click_element', { tabId, ref: refOn(snap, /button Delete account… \[e\d+\]$/m) });
  expect({ status: open.status, error: open.body.error }).toEqual({ status: 200, error: undefined });
  const during = await snapshot(tabId);
  // An unnamed form is no landmark: the dialog's content is indented under it alone.
  expect(during).toMatch(/^ {2}dialog:\n {4}## Delete your account\?\n {4}This cannot be undone\.\n {4}button Keep my account \[e\d+\] Delete for good \[e\d+\]$/m);
  expect(during).toMatch(/^\[[ x]\] Compact mode \(inert\) \[e\d+\]$/m);
  expect(during).toMatch(/^Save changes \(inert\) \[e\d+\]$/m);
  expect(during).toMatch(/^\[Profile\]\(e\d+\) \(current\) \(inert\)$/m);
  // Disabled stays disabled (not both).
  expect(during).toMatch(/^button Transfer ownership \(disabled\) \[e\d+\]$/m);
  const keep = await h.callTool('browser_click_element', { tabId, ref: refOn(during, /button Keep my account \[e\d+\]/m) });
  expect({ status: keep.status, error: keep.body.error }).toEqual({ status: 200, error: undefined });
  expect(await page.evaluate(() => (document.getElementById('confirm-delete') as HTMLDialogElement).open)).toBe(false);
  const after = await snapshot(tabId);
  expect(after).not.toContain('(inert)');
  expect(after).not.toContain('Keep my account');
});
