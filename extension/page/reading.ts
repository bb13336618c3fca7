/**
 * In-page halves of the reading tools: page text and HTML, element queries, waits, element boxes,
 * computed styles, the accessibility audit and web storage.
 */
import { findElement, frameIndexOf, indexInParent } from './dom.ts';
import { deepIndexInParent, framesDeep } from './frames.ts';

/** In the page: text/HTML of the selector (or the whole page), or a marker when nothing matches. */
export function readPage(mode: 'text' | 'html', selector: string | null, maxLength: number) {
  let el: Element | null = document.documentElement;
  if (selector) {
    try {
      el = document.querySelector(selector);
    } catch {
      return { error: `Invalid CSS selector: ${selector}` };
    }
    if (!el) return { error: `No element matches ${selector}` };
  }
  // The iframes of the part read (their content is not in innerText or outerHTML), in document
  // order: each one's index among this window's frames, its name, its src, for the text of the
  // whole page where it is in that text (-1: nowhere, e.g. inside a hidden element), and its
  // position among the document's iframes (framesDeep: one in a shadow root has no index); and in
  // a frame, its own index and position in its parent (to put each frame's text at its iframe).
  const slots: [number, string, string, number, number][] = [];
  // Iframes inside open shadow roots (web components) too.
  const frameEls: Element[] = el.tagName === 'IFRAME' || el.tagName === 'FRAME' ? [el] : [];
  const collect = (root: Element | ShadowRoot) => {
    for (const e of root.querySelectorAll('*')) {
      if (e.tagName === 'IFRAME' || e.tagName === 'FRAME') frameEls.push(e);
      if (e.shadowRoot) collect(e.shadowRoot);
    }
  };
  collect(el);
  if (el.shadowRoot) collect(el.shadowRoot);
  // Where each iframe is in the page's text: for as long as innerText takes, a text node holding a
  // placeholder sits before each iframe, and the placeholders are cut out of the text again, their
  // places kept. The placeholder carries a number drawn here for this call only (digits, which
  // text-transform leaves alone), so no text of the page can pose as one.
  const places = frameEls.map(() => -1);
  const placed: Text[] = [];
  const nonce = mode === 'text' && !selector && frameEls.length ? [...crypto.getRandomValues(new Uint32Array(4))].join('') : '';
  if (nonce) {
    for (const [k, f] of frameEls.entries()) {
      const t = document.createTextNode(`\u0001${nonce}:${k}\u0001`);
      try {
        f.before(t);
        placed.push(t);
      } catch {
        // No place for a text node there (an iframe that is a document's root).
      }
    }
  }
  let full: string;
  try {
    full = mode === 'text' ? ((el as HTMLElement).innerText ?? el.textContent ?? '') : el.outerHTML;
  } finally {
    for (const t of placed) t.remove();
  }
  if (placed.length) {
    const re = new RegExp(`\u0001${nonce}:(\\d+)\u0001`, 'g');
    // The white space next to an iframe goes too (the worker sets the frame's text apart by blank lines).
    let out = '';
    let from = 0;
    for (let m = re.exec(full); m; m = re.exec(full)) {
      const before = full.slice(from, m.index);
      out += (from > 0 ? before.trimStart() : before).trimEnd();
      from = m.index + m[0].length;
      const k = Number(m[1]);
      if (k < places.length && places[k] === -1) places[k] = out.length;
    }
    const rest = full.slice(from);
    full = out + (from > 0 ? rest.trimStart() : rest);
  }
  const deep = frameEls.length ? framesDeep(document) : [];
  for (const [k, f] of frameEls.entries()) {
    const index = frameIndexOf(f);
    const name = (f.getAttribute('aria-label') || f.getAttribute('title') || f.getAttribute('name') || '').replace(/\s+/g, ' ').trim().slice(0, 300);
    slots.push([index, name, (f as HTMLIFrameElement).src, places[k]!, deep.indexOf(f)]);
  }
  return { url: location.href, title: document.title, content: full.slice(0, maxLength), length: full.length, truncated: full.length > maxLength, slots, frameIndex: indexInParent(), frameDeep: deepIndexInParent() };
}

/** The elements matching a selector (piercing open shadow roots), at most `limit`, and how many iframes the page has. */
export function queryPage(selector: string, limit: number, attributes: string[] | null) {
  // The page's matches first, then those in open shadow roots, as the selector argument promises.
  // One by one, not out.push(...matches): spreading 300,000 matches (a 100,000-row table's cells)
  // overflows the call stack, which was then reported as an invalid selector.
  const deepAll = (root: Document | ShadowRoot, out: Element[]): Element[] => {
    for (const e of root.querySelectorAll(selector)) out.push(e);
    for (const e of root.querySelectorAll('*')) if (e.shadowRoot) deepAll(e.shadowRoot, out);
    return out;
  };
  try {
    document.createDocumentFragment().querySelector(selector);
  } catch {
    return { error: `Invalid CSS selector: ${selector}` };
  }
  const nodes = deepAll(document, []);
  const elements = nodes.slice(0, limit).map((el, index) => {
    const r = el.getBoundingClientRect();
    const attrs: Record<string, string> = {};
    const names = attributes ?? ['id', 'class', 'href', 'name', 'type', 'value', 'aria-label', 'role', 'placeholder'];
    for (const n of names) {
      const v = el.getAttribute(n);
      if (v !== null) attrs[n] = v;
    }
    return {
      index,
      tag: el.tagName.toLowerCase(),
      text: ((el as HTMLElement).innerText ?? el.textContent ?? '').trim().slice(0, 200),
      attributes: attrs,
      visible: r.width > 0 && r.height > 0,
      rect: { x: Math.round(r.x), y: Math.round(r.y), width: Math.round(r.width), height: Math.round(r.height) },
    };
  });
  let iframes = 0;
  const countFrames = (root: Document | ShadowRoot) => {
    iframes += root.querySelectorAll('iframe, frame').length;
    for (const e of root.querySelectorAll('*')) if (e.shadowRoot) countFrames(e.shadowRoot);
  };
  countFrames(document);
  return { total: nodes.length, elements, iframes };
}

/**
 * In the page: resolve when the element reaches the wanted state, or report a timeout. The wait
 * registers under `waitId` in this isolated world's __opentabs_waits__ so a cancelled call stops
 * it here too (cancelWaitInPage): no observer or timer outlives the call.
 */
export function waitInPage(selector: string | null, text: string | null, state: 'visible' | 'attached' | 'hidden', timeoutMs: number, waitId: string) {
  const find = (): Element | null => {
    if (selector) return document.querySelector(selector);
    const walker = document.createTreeWalker(document.body ?? document.documentElement, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const parent = n.parentElement;
      if (parent && !['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE'].includes(parent.tagName) && n.textContent?.includes(text!)) return parent;
    }
    return null;
  };
  const isVisible = (el: Element) => {
    const r = el.getBoundingClientRect();
    const cs = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && cs.visibility !== 'hidden' && cs.display !== 'none';
  };
  const met = () => {
    const el = find();
    if (state === 'attached') return !!el;
    if (state === 'visible') return !!el && isVisible(el);
    return !el || !isVisible(el);
  };
  if (selector) {
    try {
      document.querySelector(selector);
    } catch {
      return Promise.resolve({ error: `Invalid CSS selector: ${selector}` });
    }
  }
  const t0 = performance.now();
  const g = globalThis as unknown as { __opentabs_waits__?: Map<string, () => void> };
  const waits = (g.__opentabs_waits__ ??= new Map());
  return new Promise<{ found: boolean; state: string; elapsedMs: number } | { error: string }>((resolve) => {
    const done = (ok: boolean | 'cancelled') => {
      obs.disconnect();
      clearInterval(iv);
      clearTimeout(to);
      waits.delete(waitId);
      if (ok === 'cancelled') resolve({ error: 'Cancelled' });
      else resolve(ok ? { found: state !== 'hidden', state, elapsedMs: Math.round(performance.now() - t0) } : { error: `Timed out after ${timeoutMs} ms waiting for ${selector ?? JSON.stringify(text)} to be ${state}${selector && document.querySelector('iframe, frame') ? ' (a selector is looked up in the top document only, not inside the page\'s iframes: wait for a text instead, which is looked for in them too, or see their content with browser_snapshot)' : ''}` });
    };
    waits.set(waitId, () => done('cancelled'));
    const check = () => {
      if (met()) done(true);
    };
    const obs = new MutationObserver(check);
    obs.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    // Visibility can change without a mutation (CSS animations, layout): poll too.
    const iv = setInterval(check, 100);
    const to = setTimeout(() => done(false), timeoutMs);
    check();
  });
}

/** In the page: stop the wait registered under `waitId` (if it still runs); how many waits remain. */
export function cancelWaitInPage(waitId: string): number {
  const waits = (globalThis as unknown as { __opentabs_waits__?: Map<string, () => void> }).__opentabs_waits__;
  waits?.get(waitId)?.();
  return waits?.size ?? 0;
}

/**
 * In the page (ISOLATED world, where snapshot refs live): the element's box in document coordinates;
 * `inView`: scrolled into view first, in viewport coordinates (for an element inside an iframe).
 */
export function elementBox(selector: string | null, ref: string | null, inView = false): { error: string } | { x: number; y: number; width: number; height: number } {
  const el = findElement(selector, ref);
  if (!(el instanceof Element)) return { error: el.error };
  if (inView) el.scrollIntoView({ block: 'nearest', inline: 'nearest', behavior: 'instant' as ScrollBehavior });
  const r = el.getBoundingClientRect();
  if (r.width === 0 || r.height === 0) return { error: `The element ${ref ?? selector} has no visible box` };
  if (inView) return { x: r.left, y: r.top, width: r.width, height: r.height };
  return { x: Math.max(0, r.left + scrollX), y: Math.max(0, r.top + scrollY), width: Math.ceil(r.width), height: Math.ceil(r.height) };
}

/** Computed styles of the element (all properties, or the ones asked for). */
export function stylesInPage(selector: string | null, ref: string | null, properties: string[] | null) {
  const el = findElement(selector, ref);
  if (!(el instanceof Element)) return { error: el.error };
  const cs = getComputedStyle(el);
  const out: Record<string, string> = {};
  if (properties) for (const p of properties) out[p] = cs.getPropertyValue(p);
  else for (let i = 0; i < cs.length; i++) out[cs[i]!] = cs.getPropertyValue(cs[i]!);
  return { element: el.tagName.toLowerCase(), count: Object.keys(out).length, styles: out };
}

/** An audit of common accessibility problems, at most `limit` findings. */
export function auditInPage(limit: number) {
  type Finding = { rule: string; element: string; selector: string; detail: string };
  const findings: Finding[] = [];
  const describe = (el: Element) => {
    const id = el.id ? `#${CSS.escape(el.id)}` : '';
    const cls = el.classList.length ? `.${[...el.classList].slice(0, 2).map((c) => CSS.escape(c)).join('.')}` : '';
    return `${el.tagName.toLowerCase()}${id}${cls}`;
  };
  const add = (rule: string, el: Element, detail: string) => {
    if (findings.length < limit) findings.push({ rule, element: (el as HTMLElement).outerHTML.slice(0, 160), selector: describe(el), detail });
  };
  const visible = (el: Element) => {
    const r = el.getBoundingClientRect();
    const cs = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && cs.visibility !== 'hidden' && cs.display !== 'none';
  };
  const nameOf = (el: Element) =>
    (el.getAttribute('aria-label') || (el.getAttribute('aria-labelledby') ?? '').split(' ').map((id) => document.getElementById(id)?.textContent ?? '').join(' ') || (el as HTMLElement).innerText || el.getAttribute('title') || '').trim();
  for (const img of document.querySelectorAll('img')) if (visible(img) && !img.hasAttribute('alt') && !img.getAttribute('aria-label')) add('image-alt', img, 'image without alt text');
  for (const f of document.querySelectorAll('input:not([type=hidden]):not([type=submit]):not([type=button]):not([type=reset]), select, textarea')) {
    const field = f as HTMLInputElement;
    if (!visible(field)) continue;
    if (!field.labels?.length && !field.getAttribute('aria-label') && !field.getAttribute('aria-labelledby') && !field.getAttribute('title')) add('label', field, `${field.type || field.tagName.toLowerCase()} field without a label${field.placeholder ? ` (a placeholder is not a label: "${field.placeholder}")` : ''}`);
  }
  for (const b of document.querySelectorAll('button, [role=button], a[href]')) {
    if (!visible(b)) continue;
    const img = b.querySelector('img[alt]');
    if (!nameOf(b) && !(img && img.getAttribute('alt'))) add(b.tagName === 'A' ? 'link-name' : 'button-name', b, `${b.tagName === 'A' ? 'link' : 'button'} without an accessible name`);
  }
  // Contrast of text against the first opaque background behind it (WCAG 2.x relative luminance).
  const parse = (c: string) => (c.match(/[\d.]+/g) ?? []).map(Number);
  const lum = ([r, g, b]: number[]) => {
    const ch = (v: number) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    return 0.2126 * ch(r!) + 0.7152 * ch(g!) + 0.0722 * ch(b!);
  };
  const background = (el: Element | null): number[] => {
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c.length >= 3 && (c.length < 4 || c[3]! > 0.9)) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const seen = new Set<Element>();
  const walker = document.createTreeWalker(document.body ?? document.documentElement, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n && findings.length < limit; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || seen.has(el) || !(n.textContent ?? '').trim() || !visible(el)) continue;
    seen.add(el);
    const cs = getComputedStyle(el);
    const fg = parse(cs.color);
    if (fg.length < 3) continue;
    const [l1, l2] = [lum(fg), lum(background(el))];
    const ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
    const size = parseFloat(cs.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(cs.fontWeight) >= 700);
    const needed = large ? 3 : 4.5;
    if (ratio < needed) add('color-contrast', el, `contrast ${ratio.toFixed(2)}:1, below ${needed}:1 (text "${(n.textContent ?? '').trim().slice(0, 40)}")`);
  }
  const byRule: Record<string, number> = {};
  for (const f of findings) byRule[f.rule] = (byRule[f.rule] ?? 0) + 1;
  return { url: location.href, problems: findings.length, byRule, findings, truncated: findings.length >= limit };
}

/** One key of localStorage or sessionStorage, or all of it. */
export function readStorage(kind: 'local' | 'session', key: string | null) {
  const store = kind === 'local' ? localStorage : sessionStorage;
  if (key !== null) return { key, value: store.getItem(key) };
  const entries: Record<string, string> = {};
  for (let i = 0; i < store.length; i++) {
    const k = store.key(i)!;
    entries[k] = store.getItem(k) ?? '';
  }
  return { count: store.length, entries };
}
