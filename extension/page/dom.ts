/**
 * Helpers the in-page functions share (they run in the ISOLATED world of the tab's documents, where
 * the page's own scripts cannot reach them).
 */
import { pageAttachedRoot } from './closed-roots.ts';

/** browser_snapshot's refs in this isolated world: `eN` (or `fFeN` in a frame) to the element, and back. */
export type Refs = {
  next: number;
  byRef: Map<string, Element>;
  byEl: WeakMap<Element, string>;
  /** How many snapshots were taken; the first and the last of them that listed each element. */
  taken?: number;
  first?: WeakMap<Element, number>;
  last?: WeakMap<Element, number>;
};

type RefsHolder = { __opentabs_refs__?: Refs };

/** The refs browser_snapshot gave in this document, if any. */
export function refsOf(): Refs | undefined {
  return (globalThis as unknown as RefsHolder).__opentabs_refs__;
}

/** The refs of this document, made when there are none yet. */
export function refsOrNew(): Refs {
  return ((globalThis as unknown as RefsHolder).__opentabs_refs__ ??= { next: 1, byRef: new Map(), byEl: new WeakMap() });
}

/** The element a ref names (possibly one since removed from the page: check isConnected). */
export function refElement(ref: string): Element | undefined {
  return refsOf()?.byRef.get(ref);
}

/** The first match of a selector in the document or in any open shadow root inside it (throws for invalid CSS). */
export function deepQuery(root: Document | ShadowRoot, sel: string): Element | null {
  const hit = root.querySelector(sel);
  if (hit) return hit;
  for (const el of root.querySelectorAll('*')) {
    if (el.shadowRoot) {
      const inner = deepQuery(el.shadowRoot, sel);
      if (inner) return inner;
    }
  }
  return null;
}

/** Added to "no element matches": frames are other documents, or an agent retries a selector that cannot match here. */
export function framesNotSearched(): string {
  return document.querySelector('iframe, frame') ? ' (the content of the page\'s iframes is not searched; browser_snapshot gives refs for what they hold)' : '';
}

/**
 * The element a tool names by snapshot ref or CSS selector, or why there is none: a ref to an
 * element since removed from the page is stale (acting on it would change nothing on screen);
 * `validation` marks the caller's mistake (a selector that is not CSS, neither given) apart from an
 * element that is not there.
 */
export function findElement(selector: string | null, ref: string | null): Element | { error: string; validation?: boolean } {
  if (ref) {
    const el = refElement(ref);
    if (el?.isConnected) return el;
    if (!el) return { error: `Unknown or stale ref ${ref}; take a new browser_snapshot` };
    const again = redrawnAs(el);
    if (again) {
      const refs = refsOf()!;
      refs.byRef.set(ref, again);
      refs.byEl.set(again, ref);
      const last = refs.last?.get(el);
      if (last !== undefined) refs.last!.set(again, last);
      return again;
    }
    return { error: `Unknown or stale ref ${ref}: the element it named, ${describeElement(el)}, was removed from the page and no one element like it took its place; take a new browser_snapshot` };
  }
  if (!selector) return { error: 'Pass either selector or ref', validation: true };
  try {
    return deepQuery(document, selector) ?? { error: `No element matches ${selector}${framesNotSearched()}` };
  } catch {
    return { error: `Invalid CSS selector: ${selector}`, validation: true };
  }
}

/** Text with its runs of white space made one space, trimmed, at most 2,000 characters. */
const squashed = (t: string | null | undefined) => (t ?? '').replace(/\s+/g, ' ').trim().slice(0, 2000);

/**
 * What makes an element the same one drawn again, in two parts: `key`, its tag, the attributes
 * that name it and the tags of the `depth` elements holding it (cheap, compared first); `text`,
 * its own text (a field's: the label holding it) and the text of the nearest of those holding
 * more (the row, item or label it is in: a "Delete" button is told apart by its row). Not its value.
 */
function likeness(el: Element, depth: number): { key: string; text: () => string } {
  const attrs = ['id', 'name', 'type', 'role', 'aria-label', 'placeholder', 'href', 'title'].map((a) => el.getAttribute(a) ?? '');
  const up: Element[] = [];
  for (let p = el.parentElement; p && up.length < depth; p = p.parentElement) up.push(p);
  return {
    key: JSON.stringify([el.tagName, el.childElementCount, attrs, up.map((p) => p.tagName)]),
    text: () => {
      const field = el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement;
      // (A removed field's labels are not found through its id: the label holding it is.)
      const own = squashed(field ? el.closest('label')?.textContent : el.textContent);
      let around = '';
      for (const p of up) {
        const t = squashed(p.textContent);
        if (t !== own) {
          around = t;
          break;
        }
      }
      return JSON.stringify([own, around]);
    },
  };
}

/**
 * The element a framework drew in place of `old`, now removed from the page (a list or form
 * rendered again makes new elements with the same content): the one element of the document
 * alike in tag, naming attributes, text, the text around it and the tags holding it, that no
 * snapshot listed while `old` was there (one that stood beside it, or before it). None when there is
 * none or more than one: content that changed around it (an item moved to another list, a row
 * of other text) is not taken for it.
 */
function redrawnAs(old: Element): Element | null {
  let depth = 0;
  for (let p = old.parentElement; p && depth < 3; p = p.parentElement) depth++;
  const want = likeness(old, depth);
  const wantText = want.text();
  const refs = refsOf();
  // Listed by a snapshot that listed `old` too, or by an earlier one: it stood beside it.
  const lastOld = refs?.last?.get(old) ?? Infinity;
  let found: Element | null = null;
  const all = document.getElementsByTagName(old.tagName);
  for (let i = 0; i < all.length && i < 50_000; i++) {
    const c = all[i]!;
    if (refs?.byEl.has(c) && (refs.first?.get(c) ?? 0) <= lastOld) continue;
    const like = likeness(c, depth);
    if (like.key !== want.key || like.text() !== wantText) continue;
    if (found) return null;
    found = c;
  }
  return found;
}

/**
 * Whether the user can type into `el`: contenteditable (isContentEditable), or editable through
 * CSS alone (-webkit-user-modify: read-write or read-write-plaintext-only), which Chrome edits
 * like contenteditable but leaves out of isContentEditable. `cs`: el's computed style, when it
 * was read already.
 */
export function userEditable(el: Element, cs?: CSSStyleDeclaration): boolean {
  return (el as HTMLElement).isContentEditable || cssEditable(cs ?? getComputedStyle(el));
}

/** Whether a computed style makes its element editable (-webkit-user-modify read-write or read-write-plaintext-only). */
export function cssEditable(cs: CSSStyleDeclaration): boolean {
  return cs.getPropertyValue('-webkit-user-modify').startsWith('read-write');
}

type DomApi = { dom?: { openOrClosedShadowRoot?: (el: HTMLElement) => ShadowRoot | null } };

/**
 * Whether a closed shadow root on `el` is the page's to show: on a custom element, and attached by
 * the page's own code (closed-roots.ts). Other extensions' content scripts draw their own UI
 * inside the page under a custom element with a closed root — a password manager's account list
 * and one-time codes — closed so that the page cannot read it; the tools leave it closed, as the
 * page sees it (its host stays, empty). Whether the page defined the element's name does not
 * tell: a page can define any name, before or after the extension makes its element.
 */
export function pageOwnsClosedRoot(el: Element): boolean {
  return el.localName.includes('-') && pageAttachedRoot(el);
}

/**
 * Whether `el`, which has a closed shadow root, draws another extension's own controls in the
 * page: on a custom element, not attached by the page (pageOwnsClosedRoot). A closed root on a standard
 * element may be the page's or not: nothing tells; it is left alone.
 */
export function foreignUiHost(el: Element): boolean {
  return el.localName.includes('-') && !pageOwnsClosedRoot(el);
}

/**
 * The shadow root an element renders, open or closed: a closed one is reached through the
 * extension's chrome.dom (in the isolated world; elsewhere only open roots are seen). Looked for
 * on custom elements whose root the page's own code attached only (pageOwnsClosedRoot), one call each.
 */
export function shadowOf(el: Element): ShadowRoot | null {
  if (el.shadowRoot) return el.shadowRoot;
  if (!(el instanceof HTMLElement) || !pageOwnsClosedRoot(el)) return null;
  try {
    return (globalThis as { chrome?: DomApi }).chrome?.dom?.openOrClosedShadowRoot?.(el) ?? null;
  } catch {
    return null;
  }
}

/**
 * The custom element drawn at a viewport point whose closed shadow root is not the page's
 * (pageOwnsClosedRoot): another extension's own controls in the page, which a click there would
 * press. Null when the point is on the page's own content.
 */
export function foreignUiAt(x: number, y: number): Element | null {
  const dom = (globalThis as { chrome?: DomApi }).chrome?.dom;
  let hit = document.elementFromPoint(x, y);
  for (let i = 0; i < 32 && hit; i++) {
    let root: ShadowRoot | null = hit.shadowRoot;
    if (!root && hit instanceof HTMLElement) {
      try {
        root = dom?.openOrClosedShadowRoot?.(hit) ?? null;
      } catch {
        root = null;
      }
      if (root && foreignUiHost(hit)) return hit;
    }
    const inner: Element | null = root ? root.elementFromPoint(x, y) : null;
    if (!inner || inner === hit) return null;
    hit = inner;
  }
  return null;
}

/** What is drawn at a viewport point, looking into shadow roots (closed ones where shadowOf reaches them). */
export function elementAtPoint(x: number, y: number): Element | null {
  let hit = document.elementFromPoint(x, y);
  for (let i = 0; i < 32 && hit; i++) {
    const shadow = shadowOf(hit);
    if (!shadow) break;
    const inner: Element | null = shadow.elementFromPoint(x, y);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  return hit;
}

/** An element as `<tag id="…" class="…"> ("its text")`, for messages. */
export function describeElement(el: Element): string {
  const name = `<${el.tagName.toLowerCase()}${el.id ? ` id="${el.id}"` : ''}${typeof el.className === 'string' && el.className ? ` class="${el.className.slice(0, 60)}"` : ''}>`;
  const text = ((el as HTMLElement).innerText ?? '').trim().slice(0, 40);
  return `${name}${text ? ` ("${text}")` : ''}`;
}

/** In a frame: its index among its parent's frames (window.frames), -1 in the top document. */
export function indexInParent(): number {
  if (window.parent === window) return -1;
  for (let i = 0; i < window.parent.length; i++) if (window.parent[i] === window) return i;
  return -1;
}

/** The index among this window's frames of the frame an iframe element shows, -1 if none. */
export function frameIndexOf(el: Element): number {
  const win = (el as HTMLIFrameElement).contentWindow;
  let index = -1;
  for (let i = 0; win && i < window.length; i++) if (window[i] === win) index = i;
  return index;
}

/**
 * The open modal dialog, if any: a <dialog> opened with showModal(), else the last shown element
 * marked aria-modal="true" with the role dialog or alertdialog (a script-made modal, whose page
 * keeps focus in it and covers the rest). While it is open, the rest of the page cannot be used:
 * browser_snapshot says (inert) outside it, browser_fill_form refuses fields outside it.
 */
export function openModalDialog(): Element | null {
  try {
    const native = document.querySelector('dialog:modal');
    if (native) return native;
  } catch {}
  const aria = [...document.querySelectorAll('[aria-modal="true"]')].filter((d) => (d.tagName === 'DIALOG' || /^(alert)?dialog$/.test(d.getAttribute('role') ?? '')) && d.checkVisibility({ visibilityProperty: true }));
  return aria.at(-1) ?? null;
}

/**
 * Why a user cannot reach `el` now: 'inert' inside [inert], the open modal dialog when `el` is
 * outside it, else null. `modal`: openModalDialog(), when it was looked up already.
 */
export function unreachable(el: Element, modal: Element | null = openModalDialog()): 'inert' | Element | null {
  if (el.closest('[inert]')) return 'inert';
  if (!modal) return null;
  for (let n: Node | null = el; n; n = n instanceof ShadowRoot ? n.host : n.parentNode) if (n === modal) return null;
  return modal;
}

/**
 * Why a user cannot reach an element, as messages say it after "is" (`why`: unreachable's answer):
 * inside an [inert] part, or behind the open modal dialog (named, with its tag and id).
 */
export function unreachableWords(why: 'inert' | Element): string {
  if (why === 'inert') return 'inside an [inert] part of the page';
  const label = modalName(why);
  return `behind the open modal dialog${label ? ` "${label}"` : ''} (<${why.tagName.toLowerCase()}${why.id ? ` id="${why.id}"` : ''}>)`;
}

/** A modal dialog's name for messages: aria-labelledby, else aria-label, else its first heading ('' if none). */
export function modalName(d: Element): string {
  const ids = d.getAttribute('aria-labelledby')?.split(/\s+/).filter(Boolean) ?? [];
  const tree = d.getRootNode() as Document | ShadowRoot;
  const label = ids.map((id) => tree.getElementById?.(id)?.textContent ?? '').join(' ').trim() || d.getAttribute('aria-label')?.trim() || d.querySelector('h1,h2,h3,h4,h5,h6')?.textContent?.trim() || '';
  return label.replace(/\s+/g, ' ').slice(0, 80);
}
