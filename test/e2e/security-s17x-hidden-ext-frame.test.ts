/**
 * Other extensions put iframes of their own pages into ordinary pages (password managers' inline
 * menus, translators), hidden until used: display:none, 0×0, visibility:hidden. Such a frame shows
 * a page the tools may not use, but while its iframe cannot paint it does not stop a screenshot or
 * a PDF, and while it has no layout (display:none) it does not stop shortcut keys; clicks elsewhere
 * in the page, other iframes included, work too. Here the hidden frame is a hidden file framed by a file:// page (file://
 * allowed), which the URL policy refuses the same way. A page cannot use the leeway to show the
 * frame while the capture or the key is under way: not from CSS alone (@media print), and not from
 * its scripts without the capture failing or shortcut keys being refused from then on.
 * Performed as an agent would: REST tool calls only; the pages are loaded with Playwright so the
 * iframes are there when the calls come.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { expectPageRefused, startBrowserHarness, waitUntil, type BrowserHarness, allowFileUrls } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let home = '';
const PRIVATE = 'PRIVATE-KEY-LINE-5e4d3c';
const REFUSED = /in an iframe, which tools may not use \(it is a hidden file/;

/** A page with the user's key in an iframe styled `style`, a textarea and a button. */
function pageWith(name: string, style: string, extra = ''): void {
  writeFileSync(
    join(home, 'Downloads', `${name}.html`),
    `<!doctype html><title>${name}</title><body style="margin:0">
    <iframe id="k" src="file://${home}/.ssh/key.html" style="border:0;width:300px;height:100px;${style}"></iframe>
    <textarea id="t" style="display:block;width:300px;height:60px">some text</textarea><button id="b">ok</button>${extra}`,
  );
}

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s17x-hidden-'));
  mkdirSync(join(home, '.ssh'));
  mkdirSync(join(home, 'Downloads'));
  writeFileSync(join(home, '.ssh', 'key.html'), `<!doctype html><body style="margin:0;background:#f00"><h1>${PRIVATE}</h1>`);
  writeFileSync(join(home, 'Downloads', 'plain.html'), '<!doctype html><p>an ordinary local note</p>');
  pageWith('none', 'display:none');
  pageWith('zero', 'width:0;height:0');
  pageWith('invisible', 'visibility:hidden');
  pageWith('shown', '');
  // As extensions put their inline menus: inside a custom element's closed shadow root.
  for (const [name, style] of [['shadow-none', 'display:none'], ['shadow-shown', '']]) {
    writeFileSync(
      join(home, 'Downloads', `${name}.html`),
      `<!doctype html><title>${name}</title><body style="margin:0"><x-menu></x-menu><textarea id="t">some text</textarea><script>
        document.querySelector('x-menu').attachShadow({ mode: 'closed' }).innerHTML = '<iframe src="file://${home}/.ssh/key.html" style="border:0;width:300px;height:100px;${style}"></iframe>';
      </script>`,
    );
  }
  // A hidden frame beside a shown one the tools may use.
  pageWith('beside', 'display:none', `<iframe id="p" src="file://${home}/Downloads/plain.html" style="width:300px;height:100px"></iframe>`);
  // The key shown after a frame the tools may use, which the page takes out and puts back all the
  // time (the key's frame then has that frame's index among the window's frames), and a hidden
  // frame of its own beside them.
  writeFileSync(
    join(home, 'Downloads', 'shift.html'),
    `<!doctype html><title>shift</title><body style="margin:0">
    <iframe id="a" src="file://${home}/Downloads/plain.html" style="border:0;width:300px;height:50px"></iframe><iframe id="k" src="file://${home}/.ssh/key.html" style="border:0;width:300px;height:100px"></iframe>
    <iframe srcdoc="<p>own</p>" style="display:none"></iframe><script>
      const a = document.getElementById('a');
      const k = document.getElementById('k');
      setInterval(() => { if (a.isConnected) a.remove(); else k.before(a); }, 2);
    </script>`,
  );
  // Hidden on screen, printed: a check of the screen alone would let the PDF take the key.
  writeFileSync(
    join(home, 'Downloads', 'print.html'),
    `<!doctype html><title>print</title><style>#k{display:none} @media print {#k{display:block !important;visibility:visible !important}}</style><body style="margin:0"><iframe id="k" src="file://${home}/.ssh/key.html" style="border:0;width:300px;height:100px"></iframe>`,
  );
  // The same, from a shadow root the iframe is slotted into: its !important rules for the slotted
  // iframe win over the iframe's own inline !important style.
  writeFileSync(
    join(home, 'Downloads', 'slotted.html'),
    `<!doctype html><title>slotted</title><body style="margin:0"><x-host><iframe id="k" src="file://${home}/.ssh/key.html" style="border:0;width:300px;height:100px;display:none"></iframe></x-host><script>
      document.querySelector('x-host').attachShadow({ mode: 'closed' }).innerHTML = '<slot></slot><style>@media print { ::slotted(iframe) { display: block !important; visibility: visible !important; } }</style>';
    </script>`,
  );
  // Shows the frame from a script while it is printed, and hides it again.
  pageWith('beforeprint', 'display:none', `<script>
    addEventListener('beforeprint', () => { document.getElementById('k').style.display = 'block'; });
    addEventListener('afterprint', () => { document.getElementById('k').style.display = 'none'; });
  </script>`);
  // Shows the frame and sends focus into it as a key goes down in the textarea.
  pageWith('keydown', 'display:none', `<script>
    const k = document.getElementById('k');
    document.getElementById('t').addEventListener('keydown', () => { k.style.display = 'block'; k.contentWindow.focus(); });
  </script>`);
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
  // The user turned file:// pages on.
  await allowFileUrls(h, `file://${home}/Downloads/plain.html`);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

async function opened(name: string): Promise<{ page: Page; tabId: number }> {
  const page = await h.context.newPage();
  await page.goto(`file://${home}/Downloads/${name}.html`);
  // The frame is there and shows the key (Chrome loads it even when it is not drawn).
  await waitUntil(async () => ((await Promise.all(page.frames().map((f) => f.evaluate(() => document.body?.innerText ?? '').catch(() => '')))).some((t) => t.includes(PRIVATE)) ? true : null), `${name}: the framed key`);
  return { page, tabId: await h.tabIdOf(page) };
}

const CAPTURES = [
  ['browser_screenshot_tab', {}],
  ['browser_screenshot_tab', { fullPage: true }],
  ['browser_screenshot_tab', { selector: '#t' }],
  ['browser_print_pdf', {}],
] as const;

/** The PDF a browser_print_pdf result holds, as Latin-1 text. */
function pdfOf(r: { body: unknown }): string {
  const found = JSON.stringify(r.body).match(/JVBER[A-Za-z0-9+/=]+/);
  expect(found).not.toBeNull();
  return Buffer.from(found![0], 'base64').toString('latin1');
}

describe('a hidden iframe showing a page the tools may not use', () => {
  test('does not stop screenshots or PDFs while it cannot paint', async () => {
    for (const name of ['none', 'zero', 'invisible']) {
      const { page, tabId } = await opened(name);
      const style = () => page.evaluate(() => document.getElementById('k')!.style.cssText);
      const before = await style();
      try {
        for (const [tool, args] of CAPTURES) {
          const r = await h.callTool(tool, { tabId, ...args });
          expect([name, tool, JSON.stringify(args), r.status, r.status === 200 ? '' : JSON.stringify(r.body).slice(0, 300)]).toEqual([name, tool, JSON.stringify(args), 200, '']);
        }
        // The iframe's style is the page's again.
        expect(await style()).toBe(before);
      } finally {
        await page.close();
      }
    }
  });

  test('does not stop shortcut keys while it has no layout (display:none); clicks elsewhere work', async () => {
    const { page, tabId } = await opened('none');
    const style = () => page.evaluate(() => document.getElementById('k')!.style.cssText);
    const before = await style();
    try {
      expect((await h.callTool('browser_click_element', { tabId, selector: '#t' })).status).toBe(200);
      expect((await h.callTool('browser_click_at', { tabId, x: 20, y: 20 })).status).toBe(200);
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('t');
      const r = await h.callTool('browser_press_key', { tabId, key: 'a', modifiers: ['Control'] });
      expect([r.status, JSON.stringify(r.body).slice(0, 300)]).toEqual([200, expect.any(String)]);
      expect(await page.evaluate(() => {
        const t = document.getElementById('t') as HTMLTextAreaElement;
        return [t.selectionStart, t.selectionEnd];
      })).toEqual([0, 'some text'.length]);
      expect((await h.callTool('browser_press_key', { tabId, key: 'Enter', modifiers: ['Control'] })).status).toBe(200);
      expect(await style()).toBe(before);
    } finally {
      await page.close();
    }
  });

  test('a 0×0 or visibility:hidden one still stops shortcut keys: it takes focus and Ctrl+A selects its text', async () => {
    for (const name of ['zero', 'invisible']) {
      const { page, tabId } = await opened(name);
      try {
        expect((await h.callTool('browser_click_element', { tabId, selector: '#t' })).status).toBe(200);
        expectPageRefused(await h.callTool('browser_press_key', { tabId, key: 'a', modifiers: ['Control'] }), `${name}: Ctrl+A`, REFUSED);
        // Plain keys into the page's field still go.
        expect((await h.callTool('browser_press_key', { tabId, key: 'x' })).status).toBe(200);
      } finally {
        await page.close();
      }
    }
  });

  test('inside a closed shadow root, or beside a shown frame the tools may use, hidden: captures and shortcuts work; shown: refused', async () => {
    for (const name of ['shadow-none', 'beside']) {
      const { page, tabId } = await opened(name);
      try {
        for (const [tool, args] of CAPTURES) expect([name, tool, JSON.stringify(args), (await h.callTool(tool, { tabId, ...args })).status]).toEqual([name, tool, JSON.stringify(args), 200]);
        expect((await h.callTool('browser_click_element', { tabId, selector: '#t' })).status).toBe(200);
        expect((await h.callTool('browser_press_key', { tabId, key: 'a', modifiers: ['Control'] })).status).toBe(200);
        if (name === 'beside') {
          // The shown frame the tools may use takes clicks: the hidden one cannot be hit.
          expect((await h.callTool('browser_click_element', { tabId, selector: '#p' })).status).toBe(200);
          const box = await page.evaluate(() => {
            const r = document.getElementById('p')!.getBoundingClientRect();
            return { x: Math.round(r.x + r.width / 2), y: Math.round(r.y + r.height / 2) };
          });
          expect((await h.callTool('browser_click_at', { tabId, ...box })).status).toBe(200);
        }
      } finally {
        await page.close();
      }
    }
    const { page, tabId } = await opened('shadow-shown');
    try {
      for (const [tool, args] of CAPTURES) expectPageRefused(await h.callTool(tool, { tabId, ...args }), `shadow-shown ${tool} ${JSON.stringify(args)}`, REFUSED);
      expect((await h.callTool('browser_click_element', { tabId, selector: '#t' })).status).toBe(200);
      expectPageRefused(await h.callTool('browser_press_key', { tabId, key: 'a', modifiers: ['Control'] }), 'shadow-shown Ctrl+A', REFUSED);
    } finally {
      await page.close();
    }
  });

  test('shown, it stops captures and shortcut keys as before', async () => {
    const { page, tabId } = await opened('shown');
    try {
      for (const [tool, args] of CAPTURES) expectPageRefused(await h.callTool(tool, { tabId, ...args }), `${tool} ${JSON.stringify(args)}`, REFUSED);
      expect((await h.callTool('browser_click_element', { tabId, selector: '#t' })).status).toBe(200);
      expectPageRefused(await h.callTool('browser_press_key', { tabId, key: 'a', modifiers: ['Control'] }), 'Ctrl+A', REFUSED);
    } finally {
      await page.close();
    }
  });

  test('a shown one does not pass for a frame the tools may use when the page shifts the frames around', async () => {
    const { page, tabId } = await opened('shift');
    try {
      for (let i = 0; i < 4; i++) {
        for (const [tool, args] of CAPTURES) {
          const r = await h.callTool(tool, { tabId, ...args });
          // Refused (403), or, on a loaded machine, given up on while the page keeps its frames
          // moving (504, retryable): never a capture.
          expect([tool, JSON.stringify(args), i, r.status === 504 ? 403 : r.status]).toEqual([tool, JSON.stringify(args), i, 403]);
        }
      }
    } finally {
      await page.close();
    }
  });

  test('a page showing it in print only: the PDF holds nothing of it', async () => {
    const { page, tabId } = await opened('print');
    try {
      // Screenshots: hidden on screen.
      expect((await h.callTool('browser_screenshot_tab', { tabId })).status).toBe(200);
      const r = await h.callTool('browser_print_pdf', { tabId });
      expect(r.status).toBe(200);
      // The page has no text of its own: any font in the PDF would be the key's.
      expect(pdfOf(r)).not.toContain('/Font');
    } finally {
      await page.close();
    }
  });

  test('a page showing it in print from a shadow root it is slotted into: no PDF', async () => {
    const { page, tabId } = await opened('slotted');
    try {
      const r = await h.callTool('browser_print_pdf', { tabId });
      expectPageRefused(r, 'PDF', REFUSED);
      expect(JSON.stringify(r.body)).not.toContain('JVBER');
    } finally {
      await page.close();
    }
  });

  test('a page setting it display:block from a script as printing starts: the pin keeps it hidden, the PDF holds nothing of it', async () => {
    const { page, tabId } = await opened('beforeprint');
    try {
      const r = await h.callTool('browser_print_pdf', { tabId });
      expect(r.status).toBe(200);
      // The key's heading is the only bold text there is.
      const pdf = Buffer.from(JSON.stringify(r.body).match(/JVBER[A-Za-z0-9+/=]+/)![0], 'base64').toString('latin1');
      expect(pdf.includes('-Bold')).toBe(false);
    } finally {
      await page.close();
    }
  });

  test('a page showing it and focusing it as a shortcut key goes down: no more shortcut keys there', async () => {
    const { page, tabId } = await opened('keydown');
    try {
      expect((await h.callTool('browser_click_element', { tabId, selector: '#t' })).status).toBe(200);
      expectPageRefused(await h.callTool('browser_press_key', { tabId, key: 'a', modifiers: ['Control'] }), 'Ctrl+A', /changed the style of an iframe/);
      // Hidden again, focus back in the textarea: shortcuts stay refused in this page.
      await page.evaluate(() => {
        document.getElementById('k')!.style.display = 'none';
        document.getElementById('t')!.focus();
      });
      expectPageRefused(await h.callTool('browser_press_key', { tabId, key: 'c', modifiers: ['Control'] }), 'Ctrl+C', REFUSED);
    } finally {
      await page.close();
    }
  });
});
