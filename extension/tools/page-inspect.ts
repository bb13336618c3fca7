/**
 * Looking at a page the way a front-end developer does: the computed styles of one element, and
 * an accessibility audit of the common problems (images without text alternative, fields without
 * a label, buttons and links without a name, text whose contrast is below WCAG AA).
 */
import { ToolError } from '../shared/tool-error.ts';
import { pageFindError } from './acting.ts';
import { runInTab } from './reading.ts';
import type { Handlers } from './types.ts';

/** In the page: computed styles of the element (all properties, or the ones asked for). */
function stylesInPage(selector: string | null, ref: string | null, properties: string[] | null) {
  // Injected alone (serialized): its own copy of the query that pierces open shadow roots, as the
  // selector argument promises.
  const deepQuery = (root: Document | ShadowRoot, sel: string): Element | null => {
    const hit = root.querySelector(sel);
    if (hit) return hit;
    for (const e of root.querySelectorAll('*')) {
      const inner = e.shadowRoot ? deepQuery(e.shadowRoot, sel) : null;
      if (inner) return inner;
    }
    return null;
  };
  let el: Element | null | undefined;
  if (ref) el = (globalThis as unknown as { __opentabs_refs__?: { byRef: Map<string, Element> } }).__opentabs_refs__?.byRef.get(ref);
  else {
    try {
      el = deepQuery(document, selector!);
    } catch {
      return { error: `Invalid CSS selector: ${selector}` };
    }
  }
  if (!el || !el.isConnected) return { error: ref ? `Unknown or stale ref ${ref}; take a new browser_snapshot` : `No element matches ${selector}` };
  const cs = getComputedStyle(el);
  const out: Record<string, string> = {};
  if (properties) for (const p of properties) out[p] = cs.getPropertyValue(p);
  else for (let i = 0; i < cs.length; i++) out[cs[i]!] = cs.getPropertyValue(cs[i]!);
  return { element: el.tagName.toLowerCase(), count: Object.keys(out).length, styles: out };
}

/** In the page: an audit of common accessibility problems, at most `limit` findings. */
function auditInPage(limit: number) {
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

export const pageInspectTools = {
  async browser_get_styles(input, ctx) {
    if ((input.selector === undefined) === (input.ref === undefined)) throw new ToolError('Pass either selector or ref', { code: 'invalid_arguments', category: 'validation' });
    const tab = await ctx.tab(input.tabId);
    const r = await runInTab(tab.id!, stylesInPage, [input.selector ?? null, input.ref ?? null, input.properties ?? null], input.ref);
    if ('error' in r) throw pageFindError(String(r.error));
    return { value: r };
  },

  async browser_accessibility_audit(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    return { value: await runInTab(tab.id!, auditInPage, [input.limit ?? 100]) };
  },
} satisfies Partial<Handlers>;
