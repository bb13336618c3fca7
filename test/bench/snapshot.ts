/**
 * `bun test/bench/snapshot.ts`: what browser_snapshot costs the model on fixture pages, in a
 * real headless Chromium with the real extension. A medium app page (sidebar of links, table,
 * form; test/fixtures/pages/bench-app.html), an article (bench-article.html), and pages shaped
 * like apps people work in (app-inbox, app-settings, app-docs, app-dashboard built from web
 * components, app-chat). Prints, per page, the HTML bytes, the visible text bytes (the text of
 * every text node in a rendered element, through open shadow roots and slots, one line per
 * block; document.body.innerText leaves shadow trees out, printed beside it), the same plus what
 * the page's fields show (a text field's or textarea's value, a select's chosen option: on screen,
 * but in no text node; printed beside it, the goals stay against the text alone), the snapshot bytes as an MCP
 * client receives them, and tokens (bytes / 4), with the two goals beside them: snapshot ≤ 0.5×
 * the HTML and ≤ visible text + 25 %. Also the refs printed and the floor any format has: the
 * visible text plus the "Page: title (url)" line plus the ref ids themselves (e12 …), as a ratio
 * to the visible text. SNAPSHOT_DUMP=<dir> writes each snapshot there as <page>.txt. Never fails on the figures; exit code 0 unless it crashes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startBrowserHarness } from '../harness/browser.ts';
import { connectMcp } from '../harness/fake-extension.ts';
import { ROOT } from './lib/proc.ts';

const PAGES = ['bench-app.html', 'bench-article.html', 'app-inbox.html', 'app-settings.html', 'app-docs.html', 'app-dashboard.html', 'app-chat.html'];

const h = await startBrowserHarness();
const client = await connectMcp(h.url, h.srv.secret, '/mcp', 'snapshot-bench');
const rows: Record<string, string | number>[] = [];
try {
  for (const name of PAGES) {
    const html = readFileSync(join(ROOT, 'test', 'fixtures', 'pages', name));
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl(`/pages/${name}`));
    const tabId = await h.tabIdOf(page);
    const innerText = Buffer.byteLength(await page.evaluate(() => document.body.innerText));
    const visible = Buffer.byteLength(await page.evaluate(() => {
      let out = '';
      const visit = (n: Node) => {
        if (n.nodeType === Node.TEXT_NODE) {
          const t = (n.textContent ?? '').replace(/\s+/g, ' ');
          if (t.trim() && n.parentElement!.checkVisibility({ visibilityProperty: true })) out += t;
          return;
        }
        if (!(n instanceof Element) || ['SCRIPT', 'STYLE', 'TEMPLATE', 'OPTION'].includes(n.tagName)) return;
        const display = getComputedStyle(n).display;
        const block = display !== 'contents' && !display.startsWith('inline');
        if (block) out += '\n';
        const assigned = n instanceof HTMLSlotElement ? n.assignedNodes({ flatten: true }) : [];
        for (const c of n.shadowRoot ? n.shadowRoot.childNodes : assigned.length ? assigned : n.childNodes) visit(c);
        if (block) out += '\n';
      };
      visit(document.body);
      return out.split('\n').map((l) => l.trim()).filter(Boolean).join('\n');
    }));
    const fieldValues = Buffer.byteLength(await page.evaluate(() => {
      const out: string[] = [];
      const visit = (root: Document | ShadowRoot) => {
        for (const e of root.querySelectorAll('*')) {
          if (e.shadowRoot) visit(e.shadowRoot);
          if (!(e as HTMLElement).checkVisibility?.({ visibilityProperty: true })) continue;
          if (e instanceof HTMLSelectElement) out.push([...e.selectedOptions].map((o) => o.text.trim()).join(', '));
          else if (e instanceof HTMLTextAreaElement) out.push(e.value);
          else if (e instanceof HTMLInputElement && !['hidden', 'password', 'checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'file', 'range', 'color'].includes(e.type)) out.push(e.value);
        }
      };
      visit(document);
      return out.filter(Boolean).join('\n');
    }));
    const r = (await client.callTool({ name: 'browser_snapshot', arguments: { tabId } })) as { content: { type: string; text: string }[]; isError?: boolean };
    if (r.isError) throw new Error(`browser_snapshot failed on ${name}: ${r.content[0]?.text}`);
    const text = r.content.map((c) => c.text).join('');
    if (process.env.SNAPSHOT_DUMP) writeFileSync(join(process.env.SNAPSHOT_DUMP, `${name}.txt`), text);
    const snap = Buffer.byteLength(text);
    const ids = [...text.matchAll(/\]\((e\d+)\)|\[(e\d+)\]/g)].map((m) => m[1] ?? m[2]!);
    const floor = visible + Buffer.byteLength(text.split('\n')[0]!) + 1 + ids.join('').length;
    rows.push({
      page: name,
      htmlBytes: html.length,
      visibleTextBytes: visible,
      innerTextBytes: innerText,
      'visible+fieldsBytes': visible + fieldValues,
      snapshotBytes: snap,
      snapshotTokens: Math.round(snap / 4),
      'snapshot/html': +(snap / html.length).toFixed(2),
      'snapshot/visible': +(snap / visible).toFixed(2),
      'snapshot/(visible+fields)': +(snap / (visible + fieldValues)).toFixed(2),
      '≤ 0.5× html': snap <= html.length * 0.5 ? 'met' : 'not met',
      '≤ visible + 25 %': snap <= visible * 1.25 ? 'met' : 'not met',
      refs: ids.length,
      'floor/visible': +(floor / visible).toFixed(2),
    });
    await page.close();
  }
  console.table(rows);
} finally {
  await client.close();
  await h.stop();
}
