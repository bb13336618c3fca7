/**
 * browser_snapshot with interactiveOnly on a huge page lists only controls (and iframes), so it
 * reads only the elements on the way to them: a 200,000-node page with a few hundred controls
 * has the style of a few thousand elements read, not of every element. What it lists is exactly
 * what reading every element gives (snapshotPage's `readAll`, the reference): checked on pages
 * with every kind of control, hidden parts, shadow roots with slots, iframes, a nesting past
 * SNAPSHOT_NESTING_MAX and elements editable through CSS alone, in Chromium with snapshotPage
 * bundled alone into the page, and through the real extension. The figures (time of the call through the extension, elements whose style was
 * read) are printed; nothing is timed in the assertions.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(180_000);
let h: BrowserHarness;
let lib = '';

beforeAll(async () => {
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
  // snapshotPage alone, as a script for the page's own world (where the test can count calls).
  const dir = mkdtempSync(join(tmpdir(), 'opentabs-snap-lib-'));
  try {
    const entry = join(dir, 'entry.ts');
    writeFileSync(entry, `import { snapshotPage } from ${JSON.stringify(resolve(import.meta.dir, '../../extension/page/snapshot.ts'))};\n(globalThis as any).__snap = snapshotPage;\n`);
    const out = await Bun.build({ entrypoints: [entry], target: 'browser', format: 'iife' });
    if (!out.success) throw new Error(out.logs.join('\n'));
    lib = await out.outputs[0]!.text();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 90_000);

afterAll(async () => {
  await h?.stop();
});

const MARK = '\u0000frame:';

/** The page's snapshot both ways, with how many elements had their style read each time. */
async function both(page: Page, selector: string | null = null): Promise<{ quick: string; all: string; quickStyles: number; allStyles: number; quickMs: number; allMs: number }> {
  if (!(await page.evaluate(() => '__snap' in globalThis))) await page.addScriptTag({ content: lib });
  return page.evaluate(({ mark, selector }) => {
    const snap = (globalThis as any).__snap as (...a: unknown[]) => { snapshot?: string; error?: string; elements: number };
    const real = window.getComputedStyle;
    let styles = 0;
    window.getComputedStyle = function (this: Window, ...a: Parameters<typeof getComputedStyle>) {
      styles++;
      return real.apply(this, a);
    };
    try {
      let t = performance.now();
      const q = snap(selector, 10, true, '', mark);
      const quickMs = performance.now() - t;
      const quickStyles = styles;
      styles = 0;
      t = performance.now();
      const a = snap(selector, 10, true, '', mark, true);
      const allMs = performance.now() - t;
      const dump = (r: { snapshot?: string; error?: string; elements: number }) => `${r.error ?? r.snapshot}\n(${r.elements} elements)`;
      return { quick: dump(q), all: dump(a), quickStyles, allStyles: styles, quickMs, allMs };
    } finally {
      window.getComputedStyle = real;
    }
  }, { mark: MARK, selector });
}

/** A page of `blocks` × 50 paragraphs of text (about 100,000 nodes per 1,000 blocks) with a control every `every` blocks. */
function giant({ blocks, every }: { blocks: number; every: number }) {
  document.body.textContent = '';
  const all = document.createDocumentFragment();
  for (let i = 0; i < blocks; i++) {
    const div = document.createElement('div');
    for (let j = 0; j < 50; j++) {
      const p = document.createElement('p');
      p.textContent = `Row ${i}.${j} with some words`;
      div.appendChild(p);
    }
    if (i % every === 0) {
      const b = document.createElement('button');
      b.textContent = `Act ${i}`;
      div.children[25]!.appendChild(b);
      const a = document.createElement('a');
      a.href = `#r${i}`;
      a.textContent = `Link ${i}`;
      div.appendChild(a);
    }
    all.appendChild(div);
  }
  document.body.appendChild(all);
  void document.body.offsetHeight;
}

test('a 200,000-node page: the same list, the style of a few elements read instead of all', async () => {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/index.html?giant-interactive'));
  await page.evaluate(giant, { blocks: 2_000, every: 10 });
  const nodes = await page.evaluate(() => {
    let n = 0;
    for (const w = document.createTreeWalker(document); w.nextNode(); ) n++;
    return n;
  });
  const tabId = await h.tabIdOf(page);

  // Three calls; the quickest is printed (two cores are shared with other work).
  let ms = Infinity;
  let viaExtension = '';
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const r = await h.callTool('browser_snapshot', { tabId, interactiveOnly: true });
    ms = Math.min(ms, performance.now() - t0);
    expect(r.status).toBe(200);
    viaExtension = r.body.result.snapshot as string;
  }

  const { quick, all, quickStyles, allStyles, quickMs, allMs } = await both(page);
  console.log(`[leftover-s16] ${nodes} nodes, interactiveOnly through the extension: ${Math.round(ms)} ms; in the page ${Math.round(quickMs)} ms (reading all: ${Math.round(allMs)} ms); styles read: ${quickStyles} (reading all: ${allStyles})`);
  expect(quick).toBe(all);
  expect(quick).toContain('button Act 0');
  expect(quick).toContain('[Link 1990]');
  // The extension's refs are its own; the lines are the same.
  const norm = (s: string) => s.replace(/\b(e)\d+\b/g, '$1#');
  expect(norm(viaExtension)).toBe(norm(quick.slice(0, quick.lastIndexOf('\n('))));
  expect(quickStyles).toBeLessThan(allStyles / 20);
  await page.close();
});

/** Every kind of control, hidden parts, SKIP elements, shadow roots with slots, iframes, filler. */
function tricky() {
  document.body.innerHTML = `
    <nav aria-label="Main"><a href="#a">Alpha</a> <a href="#b">Beta</a><br><a>no href</a></nav>
    <div hidden><button>Hidden attr</button></div>
    <div style="display:none"><a href="#x">Display none</a></div>
    <div style="visibility:hidden"><span style="visibility:visible"><button>Visible in hidden</button></span></div>
    <div aria-hidden="true"><input placeholder="aria hidden"></div>
    <template><button>In template</button></template>
    <noscript><button>In noscript</button></noscript>
    <svg width="10" height="10"><a href="#svg"><text>svg link</text></a></svg>
    <input type="hidden" name="h1"><input type="hidden" name="h2" style="display:block">
    <div role="button foo">Role with two words</div><div role=" button">Role with a space</div><div role="">Empty role</div>
    <span role="tab" aria-selected="true">Tab one</span><div role="switch" aria-checked="true">Switch</div>
    <div tabindex="0">Focusable</div><div tabindex="-1">Not focusable</div><div onclick="">Clicky</div>
    <div contenteditable="true">Edit <b>bold</b></div><div contenteditable="plaintext-only">Plain</div><div contenteditable="false">Not editable</div>
    <details><summary>More</summary><button>Inside closed details</button></details>
    <details open><summary>Open</summary><button>Inside open details</button></details>
    <button>Outer <a href="#in">inner link</a></button>
    <label>Name <input value="v"></label><select><option>One</option><option selected>Two</option></select><textarea>text</textarea>
    <option>Stray option</option>
    <section aria-label="Frames"><iframe title="Framed" srcdoc="<button>in frame</button>"></iframe></section>
    <div id="host1"><span slot="a"><button>Slotted A</button></span><i>plain slotted</i><span slot="zzz"><button>Not slotted</button></span></div>
    <div id="host2"><button>Light child, no slot</button></div>
    <div id="host3"><b slot="x"><a href="#fw">forwarded</a></b></div>
    <div id="closed"><button>Under a closed root</button></div>
    <div id="part"><p>Part <a href="#p1">one</a></p><div role="button" tabindex="0" id="bhost">Host button</div></div>
    <ul><li><a href="#l1">Item one</a></li><li>Item two <input type="checkbox" checked></li></ul>
    <table><tr><td>Cell</td><td><button>In cell</button></td></tr></table>
  `;
  const r1 = document.getElementById('host1')!.attachShadow({ mode: 'open' });
  r1.innerHTML = `<button>In shadow</button><slot name="a"></slot><p><slot>fallback <a href="#fb">fallback link</a></slot></p><iframe title="Shadow frame" srcdoc="<a href='#sf'>shadow frame link</a>"></iframe>`;
  document.getElementById('host2')!.attachShadow({ mode: 'open' }).innerHTML = '<p>Shadow text only</p>';
  const r3 = document.getElementById('host3')!.attachShadow({ mode: 'open' });
  r3.innerHTML = '<div id="inner"><slot name="x" slot="y"></slot><span>inner light</span></div>';
  (r3.getElementById('inner') as HTMLElement).attachShadow({ mode: 'open' }).innerHTML = '<section><slot name="y">inner fallback</slot><button>Inner shadow</button></section>';
  document.getElementById('closed')!.attachShadow({ mode: 'closed' }).innerHTML = '<button>Closed shadow</button>';
  document.getElementById('bhost')!.attachShadow({ mode: 'open' }).innerHTML = '<a href="#bh">link in a host button</a><slot></slot>';
  const filler = document.createElement('div');
  for (let i = 0; i < 3_000; i++) filler.appendChild(document.createElement('p')).textContent = `filler ${i}`;
  document.body.appendChild(filler);
}

/** A chain of elements nested past SNAPSHOT_NESTING_MAX, controls along it. */
function deepChain() {
  let el: Element = document.body;
  for (let i = 0; i < 450; i++) {
    el = el.appendChild(document.createElement('div'));
    if (i % 100 === 0) el.appendChild(document.createElement('button')).textContent = `Depth ${i}`;
  }
  el.append('bottom');
}

/** A chain of plain elements nested past SNAPSHOT_NESTING_MAX, nothing listed in it. */
function deepPlainChain() {
  let el: Element = document.body.appendChild(document.createElement('section'));
  for (let i = 0; i < 450; i++) el = el.appendChild(document.createElement('div'));
  el.append('bottom');
}

/** 300 web components, each a shadow root with a button and a slot, and plain content around them. */
function components() {
  const all = document.createDocumentFragment();
  for (let i = 0; i < 300; i++) {
    const host = all.appendChild(document.createElement('div'));
    host.appendChild(document.createElement('span')).textContent = `slotted ${i}`;
    host.attachShadow({ mode: 'open' }).innerHTML = `<div><p>Card ${i}</p><button>Open ${i}</button><slot></slot><p>${'more text '.repeat(5)}</p></div>`;
    for (let j = 0; j < 20; j++) all.appendChild(document.createElement('p')).textContent = `text ${i}.${j}`;
  }
  document.body.appendChild(all);
}

/** An editable part in a shadow tree, content slotted into it. */
function editablePart() {
  const host = document.body.appendChild(document.createElement('div'));
  host.appendChild(document.createElement('span')).textContent = 'Slotted into an editable part';
  host.attachShadow({ mode: 'open' }).innerHTML = '<div contenteditable="true"><slot></slot></div>';
}

/** Elements editable through CSS alone (-webkit-user-modify): a class rule, @media and @supports rules, a style attribute. */
function cssEditable() {
  const style = document.head.appendChild(document.createElement('style'));
  style.textContent = `.rw { -webkit-user-modify: read-write; } @media screen { #m { -webkit-user-modify: read-write-plaintext-only; } }
    @supports (display: grid) { .sup > span { -webkit-user-modify: read-write; } } .off { -webkit-user-modify: read-only; }`;
  const box = document.body.appendChild(document.createElement('div'));
  box.innerHTML = `<div><div class="rw">Rich <b>bold</b> <span class="off">locked</span></div></div><p><span id="m">By media</span></p>
    <div class="sup"><span>By supports</span></div><div style="-webkit-user-modify: read-write">By attribute style</div>
    <div class="rw off">Overridden</div><div class="rw" hidden>Hidden editable</div>`;
}

/** An element editable through CSS inside a shadow tree, content slotted into it; and a nested rule setting it. */
function cssEditableShadow() {
  const host = document.body.appendChild(document.createElement('div'));
  host.appendChild(document.createElement('span')).textContent = 'Slotted into a CSS-editable part';
  host.attachShadow({ mode: 'open' }).innerHTML = '<style>.e { -webkit-user-modify: read-write; }</style><div class="e"><slot></slot></div>';
}

function cssEditableNested() {
  const style = document.head.appendChild(document.createElement('style'));
  style.textContent = '.outer { .inner { -webkit-user-modify: read-write; } }';
  document.body.appendChild(document.createElement('div')).innerHTML = '<div class="outer"><div class="inner">Nested rule</div></div>';
}

/** Controls enough to fill the snapshot: it is cut, with its mark. */
function manyControls() {
  document.body.textContent = '';
  for (let i = 0; i < 4_000; i++) {
    const d = document.body.appendChild(document.createElement('div'));
    d.appendChild(document.createElement('button')).textContent = `A rather long button name number ${i}`;
  }
}

/** `styles`: how many elements the quick walk reads the style of, against reading all: fewer, the same (it reads all), or no more. */
const PAGES: { name: string; build: (() => void)[]; styles: 'fewer' | 'same' | 'no more'; selector?: string }[] = [
  { name: 'every kind of control', build: [tricky], styles: 'fewer' },
  { name: 'a part of it (selector)', build: [tricky], styles: 'no more', selector: '#part' },
  { name: 'nested past the bound', build: [tricky, deepChain], styles: 'fewer' },
  { name: 'plain elements nested past the bound', build: [tricky, deepPlainChain], styles: 'no more' },
  { name: '300 web components', build: [tricky, components], styles: 'fewer' },
  { name: 'an editable part in a shadow tree', build: [tricky, editablePart], styles: 'same' },
  { name: 'controls past the size bound', build: [manyControls], styles: 'no more' },
  { name: 'elements editable through CSS alone', build: [tricky, cssEditable], styles: 'fewer' },
  { name: 'an element editable through CSS in a shadow tree', build: [tricky, cssEditableShadow], styles: 'same' },
  { name: 'a nested rule making an element editable', build: [tricky, cssEditableNested], styles: 'same' },
];

for (const p of PAGES) {
  test(`${p.name}: the quick walk lists exactly what reading every element lists`, async () => {
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl(`/pages/index.html?leftover-${encodeURIComponent(p.name)}`));
    for (const build of p.build) await page.evaluate(build);
    // The iframes' documents are loaded (their lines are marks here, filled in by the worker).
    await page.waitForFunction(() => [...document.querySelectorAll('iframe')].every((f) => f.contentDocument?.readyState === 'complete'));
    const { quick, all, quickStyles, allStyles } = await both(page, p.selector ?? null);
    expect(quick).toBe(all);
    if (p.styles === 'fewer') expect(quickStyles).toBeLessThan(allStyles / 2);
    else if (p.styles === 'same') expect(quickStyles).toBe(allStyles);
    else expect(quickStyles).toBeLessThanOrEqual(allStyles);
    if (p.name.includes('nested past the bound')) expect(quick).toContain('elements nested more than');
    if (p.name === 'controls past the size bound') expect(quick).toContain('[snapshot cut at');
    if (p.name === 'elements editable through CSS alone') {
      for (const name of ['Rich bold locked', 'By media', 'By supports', 'By attribute style']) expect(quick).toMatch(new RegExp(`textbox = "${name}" \\[e\\d+\\]`));
      expect(quick).not.toMatch(/textbox = "(Overridden|Hidden editable|locked)/);
    }
    // The shadow tree's editable part: its text is slotted in (innerText does not give it; the snapshot reads it through the slot).
    if (p.name.includes('CSS in a shadow tree')) expect(quick).toMatch(/^textbox = "Slotted into a CSS-editable part" \[e\d+\]$/m);
    if (p.name.includes('nested rule')) expect(quick).toMatch(/textbox = "Nested rule" \[e\d+\]/);
    // And through the extension (its refs are its own), frames filled in.
    const tabId = await h.tabIdOf(page);
    const r = await h.callTool('browser_snapshot', { tabId, interactiveOnly: true, ...(p.selector ? { selector: p.selector } : {}) });
    expect(r.status).toBe(200);
    const via = r.body.result.snapshot as string;
    const norm = (s: string) => s.replace(/\b(f\d+)?e\d+\b/g, 'e#');
    const lines = quick.slice(0, quick.lastIndexOf('\n(')).split('\n').filter((l) => !l.includes(MARK));
    for (const l of lines) expect(norm(via)).toContain(norm(l));
    if (p.name === 'every kind of control') expect(via).toContain('in frame');
    await page.close();
  });
}
