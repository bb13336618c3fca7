import { cssEditable, frameIndexOf, indexInParent, openModalDialog, pageOwnsClosedRoot, refsOrNew, shadowOf, unreachable } from './dom.ts';

/**
 * The shadow root `el` renders, open or closed, as shadowOf (dom.ts) finds it, for an element of
 * this document or of a parent's (another realm, where `instanceof HTMLElement` is false).
 */
function anyShadowOf(el: Element): ShadowRoot | null {
  if (el.shadowRoot) return el.shadowRoot;
  if (el.namespaceURI !== 'http://www.w3.org/1999/xhtml' || !pageOwnsClosedRoot(el)) return null;
  try {
    return (globalThis as unknown as { chrome?: { dom?: { openOrClosedShadowRoot?: (el: Element) => ShadowRoot | null } } }).chrome?.dom?.openOrClosedShadowRoot?.(el) ?? null;
  } catch {
    return null;
  }
}

/**
 * The document's iframe and frame elements in tree order, those inside open and closed shadow
 * roots included: how a snapshot numbers a document's iframes, the same in the parent (each
 * iframe's line) and in the frame (snapshotPage's frameDeep), so that withFrames tells apart the
 * frames of iframes inside closed shadow roots too. (framesDeep in frames.ts, which the element
 * tools share with code run through the DevTools protocol, sees open roots only.)
 */
function framesDeepAll(root: Document | ShadowRoot, out: Element[] = []): Element[] {
  for (const e of root.querySelectorAll('*')) {
    if (e.tagName === 'IFRAME' || e.tagName === 'FRAME') out.push(e);
    const shadow = anyShadowOf(e);
    if (shadow) framesDeepAll(shadow, out);
  }
  return out;
}

/** In a frame: its iframe's position in framesDeepAll of the parent's document; -1 when that document is of another origin, or this is the top. */
function deepIndexAllInParent(): number {
  try {
    const el = window.frameElement;
    return el ? framesDeepAll(el.ownerDocument).indexOf(el) : -1;
  } catch {
    return -1;
  }
}

/** Characters of snapshot text one document gives at most; the walk stops there, with a mark. */
export const SNAPSHOT_MAX_CHARS = 100_000;
/** Elements (and shadow roots) nested deeper than this are not walked, with a mark: the walk recurses. */
export const SNAPSHOT_NESTING_MAX = 400;
/** A text node (or preformatted block, or element's name) longer than this is read only this far. */
const TEXT_SCAN_CHARS = 100_000;
/** Shadow trees and slotted subtrees read at most when looking for what renders inside one element. */
const SCOPES_MAX = 2000;
/** Children of a flex or grid container read for their CSS order at most (more are taken in document order). */
const ORDERED_MAX = 2000;
/** The mark ending a snapshot cut at SNAPSHOT_MAX_CHARS. */
export const snapshotCutMark = (chars: number) => `[snapshot cut at ${chars} characters: the rest of the page is not shown; snapshot a part with a selector, or pass a smaller maxDepth or interactiveOnly]`;

/** The snapshot held to `max` characters, cut at a line's end, its last line the cut mark. */
export function cutSnapshot(snapshot: string, max: number): string {
  let text = snapshot;
  if (text.length > max) {
    const end = text.lastIndexOf('\n', max);
    text = end > 0 ? text.slice(0, end) : text.slice(0, max);
  }
  return `${text}\n${snapshotCutMark(max)}`;
}

/**
 * browser_snapshot: the page as compact, Markdown-like plain text an agent can read and act on:
 *   nav Projects:                      a landmark (nav, header, main, aside, footer, dialog …; a
 *                                      form or section only when named, as in ARIA)
 *   - [Invoices](e4)                   a list item holding a link; the ref is in the parentheses
 *   # Orders                           a heading (one # per level)
 *   Paid on time, see [terms](e9).     plain text with its inline links, no role prefix
 *   Jan\t12\tpaid\tbutton Open [e5]  a table row: cells separated by tabs, controls inline
 *   textbox Email = "a@b.c" [e7]       a field: short role mark, name, value, [ref]; a custom
 *                                      text box, combobox or slider too (its text is its value)
 *   [x] Remember me [e8]               a checkbox ([ ] unchecked, [-] mixed; radios ( ) and (x))
 *   button Bold (pressed) [e9]         states: (expanded)/(collapsed), (selected), (pressed),
 *                                      (current), (invalid), (read-only), (disabled), (inert:
 *                                      outside an open modal dialog — a <dialog> shown
 *                                      modally or an aria-modal one, said on the first line —
 *                                      or in [inert])
 *   progress Upload = "40%"            a progress bar or meter: its value (no ref)
 *   iframe Pay (https://pay.example/): an iframe, its content indented below (refs f7e1 …: withFrames);
 *                                      (inert) after its name when a user cannot reach it, and
 *                                      then every control of its content says (inert) too
 * Honest compaction, not cutting: every visible text is kept (a text longer than TEXT_MAX_CHARS is
 * elided with an explicit mark saying how to read the rest); refs (eN, looked up in
 * __opentabs_refs__.byRef by the other tools) go only to what can be acted on (links, buttons,
 * fields, elements with a click handler or tabindex); a label is not listed beside the field it
 * names (the field carries it), nor one named through aria-labelledby beside its shown control;
 * a name no text shows (aria-label) of a control in a table row is said in the first row with a
 * control at that place only, the later rows' controls with that same name there are written
 * without it (`[ ] [e30]`: the row's text is their context; interactiveOnly keeps every name), and
 * a named one there without its role word (`Open [e31]` under `button Open [e25]`), its
 * aria-label said as its text when the rest of it is words that row or the table's header row
 * shows (`Open [e32]` for "Open order #10233" in the row of #10233 under the column Order); a
 * control right after another with the same role word, nothing shown between, is written without
 * it (`button Bold [e9] Italic [e10]`; a field always says its kind; interactiveOnly keeps them
 * all); a combobox says (expanded) when open, nothing when closed; an
 * aria-label said after a control's text (`button 👍 3 (3 people liked) [e5]`) is said once per
 * role, text and states, unless that text goes with several; an aria-label that the text just
 * before the control ends with is not said again on it; a container's or landmark's
 * aria-label made of words its content shows is not said; fully transparent (opacity 0) text,
 * links and buttons are not shown (a see-through field is: it takes the click); the children of a
 * flex or grid container read in the order they are laid out (CSS order, -reverse directions);
 * open and closed shadow roots and slots are read where they render; inline content shares one line, as it reads on screen; a
 * landmark whose content is one line shares it, one inside another is indented; an aria-label
 * never hides an element's visible text. Runs in the page (ISOLATED world, where refs live).
 * Bounded on any page: the walk stops once the text reaches SNAPSHOT_MAX_CHARS and does not go
 * below SNAPSHOT_NESTING_MAX nested elements (each with a mark saying what was left out and how to
 * read it), and a giant text node is read only as far as TEXT_SCAN_CHARS.
 * With interactiveOnly the walk goes only into elements on the way to a control, an iframe, a
 * shadow root or a slot (interactiveParts), which lists the same as reading every element
 * (`readAll`, what the quicker walk is checked against).
 * `behind`: this document is a frame whose iframe a page above cannot let a user reach (behind its
 * open modal dialog, or in [inert]): every control says (inert), as the page's own outside the dialog do.
 */
export function snapshotPage(selector: string | null, maxDepth: number, interactiveOnly: boolean, refPrefix = '', frameMark = '', readAll = false, behind = false) {
  const TEXT_MAX_CHARS = 2000;
  const NAME_MAX_CHARS = 300;
  const OPTIONS_MAX_CHARS = 300;
  const CELL_SEP = '\t';
  const refs = refsOrNew();
  const taken = (refs.taken = (refs.taken ?? 0) + 1);
  const first = (refs.first ??= new WeakMap());
  const last = (refs.last ??= new WeakMap());
  let root: Element | null = document.body ?? document.documentElement;
  if (selector) {
    try {
      root = document.querySelector(selector);
    } catch {
      return { error: `Invalid CSS selector: ${selector}` };
    }
    if (!root) return { error: `No element matches ${selector}` };
  }
  const IMPLICIT: Record<string, string> = {
    A: 'link', BUTTON: 'button', SELECT: 'combobox', TEXTAREA: 'textbox', IMG: 'img', NAV: 'navigation', MAIN: 'main',
    HEADER: 'banner', FOOTER: 'contentinfo', ASIDE: 'complementary', FORM: 'form', UL: 'list', OL: 'list', LI: 'listitem',
    TABLE: 'table', TR: 'row', TD: 'cell', TH: 'columnheader', H1: 'heading', H2: 'heading', H3: 'heading', H4: 'heading',
    H5: 'heading', H6: 'heading', DIALOG: 'dialog', OPTION: 'option', SUMMARY: 'button', MENU: 'list', SEARCH: 'search',
  };
  const INPUT: Record<string, string> = { checkbox: 'checkbox', radio: 'radio', button: 'button', submit: 'button', reset: 'button', range: 'slider', search: 'searchbox', number: 'spinbutton', image: 'button', file: 'button' };
  const ACTIONABLE = ['link', 'button', 'textbox', 'searchbox', 'checkbox', 'radio', 'combobox', 'slider', 'spinbutton', 'option', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab', 'switch', 'treeitem'];
  const IS_ACTIONABLE = new Set(ACTIONABLE);
  /** How a role is marked before a control's name (links are Markdown links instead). */
  const MARK: Record<string, string> = { combobox: 'select', spinbutton: 'number', menuitemcheckbox: 'menuitem', menuitemradio: 'menuitem' };
  /** Input types worth naming instead of "textbox" (the model types differently into them). */
  const TYPED = new Set(['email', 'password', 'tel', 'url', 'date', 'time', 'datetime-local', 'month', 'week', 'color']);
  const LANDMARK: Record<string, string> = { navigation: 'nav', banner: 'header', contentinfo: 'footer', complementary: 'aside', main: 'main', form: 'form', search: 'search', dialog: 'dialog', alertdialog: 'dialog', region: 'region' };
  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'SVG', 'svg', 'HEAD', 'OPTION', 'DATALIST']);
  const ACTIONABLE_SELECTOR = `a[href],button,input:not([type=hidden]),select,textarea,summary,[onclick],[tabindex]:not([tabindex="-1"]),[draggable=true],[contenteditable=""],[contenteditable=true],${ACTIONABLE.map((r) => `[role=${r}]`).join(',')}`;
  /**
   * `el`'s role; `cs` its computed style. An editable element (contenteditable, or editable
   * through CSS alone: -webkit-user-modify, which isContentEditable leaves out) is a textbox when
   * its parent (a shadow root's host for its top elements) is not editable: the editable region's
   * top element.
   */
  const roleOf = (el: Element, cs: CSSStyleDeclaration): string | null => {
    const explicit = el.getAttribute('role');
    if (explicit) return explicit.split(' ')[0]!;
    if (el.tagName === 'INPUT') return (el as HTMLInputElement).type === 'hidden' ? null : (INPUT[(el as HTMLInputElement).type] ?? 'textbox');
    if (el.tagName === 'A' && !el.hasAttribute('href')) return null;
    const byAttribute = (el as HTMLElement).isContentEditable;
    if (byAttribute || cssEditable(cs)) {
      const up = el.parentElement ?? (el.parentNode instanceof ShadowRoot ? el.parentNode.host : null);
      // The parent's style is read only for an element editable through CSS alone.
      if (up && !(up as HTMLElement).isContentEditable && (byAttribute || !cssEditable(getComputedStyle(up)))) return 'textbox';
    }
    if (el.tagName === 'SECTION') return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') ? 'region' : null;
    return IMPLICIT[el.tagName] ?? null;
  };
  /**
   * Does an element with this style show nothing of itself and its content? Its style decides, not
   * the hidden attribute: a component's `:host { display: block }` shows a host marked hidden, and
   * hidden="until-found" hides through content-visibility.
   */
  const unrendered = (cs: CSSStyleDeclaration) => cs.display === 'none' || cs.contentVisibility === 'hidden';
  const squash = (s: string | null | undefined) => (s ?? '').replace(/\s+/g, ' ').trim();
  const cut = (s: string, max: number, how: string) => (s.length <= max ? s : `${s.slice(0, max)}… [${s.length - max} more characters: ${how}]`);
  const quote = (s: string) => JSON.stringify(s);
  // (An element draggable="true" is one a drag starts from: it gets a ref for browser_drag.)
  const clickable = (el: Element) => el.hasAttribute('onclick') || (el.hasAttribute('tabindex') && el.getAttribute('tabindex') !== '-1') || el.getAttribute('draggable') === 'true';
  /**
   * The trees whose content renders inside `el` beyond its own subtree: the open shadow roots of
   * it and of elements in it, and what is slotted into its slots (found one level at a time, at
   * most SCOPES_MAX of them).
   */
  const renderedScopes = (el: Element, visit: (scope: Element | ShadowRoot) => boolean): boolean => {
    const scopes: (Element | ShadowRoot)[] = [el];
    for (let i = 0; i < scopes.length && i < SCOPES_MAX; i++) {
      const scope = scopes[i]!;
      if (visit(scope)) return true;
      const found = (e: Element) => {
        const shadow = shadowOf(e);
        if (shadow) scopes.push(shadow);
        if (e instanceof HTMLSlotElement) scopes.push(...e.assignedElements({ flatten: true }));
      };
      if (scope instanceof Element) found(scope);
      for (const e of scope.querySelectorAll('*')) found(e);
    }
    return false;
  };
  /** Does anything that can be acted on render inside `el` (its shadow trees and slotted content too)? */
  const hasActionable = (el: Element) =>
    el.querySelector(ACTIONABLE_SELECTOR) !== null || renderedScopes(el, (s) => s !== el && ((s instanceof Element && s.matches(ACTIONABLE_SELECTOR)) || s.querySelector(ACTIONABLE_SELECTOR) !== null));
  /** Does `el` show content from a shadow tree or a slot (which its innerText leaves out)? */
  const hasShadowContent = (el: Element) => el.querySelector('slot') !== null || renderedScopes(el, (s) => s !== el);
  /** The children as the page renders them: an open shadow root's, a slot's assigned nodes (else its fallback), else its own. */
  const renderedChildren = (el: Element): Iterable<Node> => {
    const shadow = shadowOf(el);
    if (shadow) return shadow.childNodes;
    const assigned = el instanceof HTMLSlotElement ? el.assignedNodes({ flatten: true }) : [];
    return assigned.length ? assigned : el.childNodes;
  };
  /** The computed style of each element the walk has been into. */
  const styleOf = new WeakMap<Element, CSSStyleDeclaration>();
  /**
   * A flex or grid container's children in the order they are laid out: by their CSS order, then
   * reversed for flex-direction row-reverse or column-reverse (a chat's newest-at-the-bottom list
   * is often column-reverse). Text between elements is an item of order 0. A container of more than
   * ORDERED_MAX children is only reversed.
   */
  const inVisualOrder = (el: Element, children: Iterable<Node>): Iterable<Node> => {
    const cs = styleOf.get(el) ?? getComputedStyle(el);
    const flex = cs.display.endsWith('flex');
    if (!flex && !cs.display.endsWith('grid')) return children;
    const reverse = flex && cs.flexDirection.endsWith('-reverse');
    const items = [...children];
    // Each child's style is read only for a container of at most ORDERED_MAX children.
    if (items.length > ORDERED_MAX) return reverse ? items.reverse() : items;
    const orders = items.map((n) => (n.nodeType === Node.ELEMENT_NODE ? Number(getComputedStyle(n as Element).order) || 0 : 0));
    if (!reverse && orders.every((o) => o === 0)) return items;
    const sorted = items.map((n, i) => ({ n, o: orders[i]!, i })).sort((a, b) => a.o - b.o || a.i - b.i).map((x) => x.n);
    return reverse ? sorted.reverse() : sorted;
  };
  /**
   * The text `el` renders, read through its shadow trees and slots (innerText stops at a shadow
   * host): hidden elements left out, one space between blocks; at most TEXT_SCAN_CHARS.
   */
  const renderedText = (el: Element): string => {
    let s = '';
    const visit = (n: Node, nesting: number) => {
      if (s.length > TEXT_SCAN_CHARS) return;
      if (n.nodeType === Node.TEXT_NODE) {
        s += n.textContent ?? '';
        return;
      }
      if (n.nodeType !== Node.ELEMENT_NODE || nesting >= SNAPSHOT_NESTING_MAX) return;
      const e = n as Element;
      if (SKIP.has(e.tagName) || e.getAttribute('aria-hidden') === 'true') return;
      const cs = getComputedStyle(e);
      if (unrendered(cs) || cs.visibility === 'hidden') return;
      const block = !cs.display.startsWith('inline') && cs.display !== 'contents';
      if (block) s += ' ';
      for (const c of renderedChildren(e)) visit(c, nesting + 1);
      if (block) s += ' ';
    };
    visit(el, 0);
    return s.slice(0, TEXT_SCAN_CHARS);
  };
  const isField = (el: Element): el is HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement =>
    el instanceof HTMLInputElement || el instanceof HTMLSelectElement || el instanceof HTMLTextAreaElement;
  /** A label's own text, without the fields (and their options) inside it. */
  const labelText = (label: Element): string => {
    let s = '';
    const visit = (n: Node, nesting: number) => {
      if (s.length > TEXT_SCAN_CHARS) return;
      if (n.nodeType === Node.TEXT_NODE) s += (n.textContent ?? '').slice(0, TEXT_SCAN_CHARS);
      else if (n.nodeType === Node.ELEMENT_NODE && nesting < SNAPSHOT_NESTING_MAX && !isField(n as Element) && !SKIP.has((n as Element).tagName)) for (const c of n.childNodes) visit(c, nesting + 1);
    };
    visit(label, 0);
    return squash(s);
  };
  const fieldName = (el: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement) => {
    const label = el.labels?.[0];
    return squash(el.getAttribute('aria-label') || (label ? labelText(label) : '') || el.getAttribute('placeholder') || el.getAttribute('title') || el.getAttribute('name'));
  };
  /** The elements `el` names in aria-labelledby, looked up in its own tree (a shadow root's ids are its own). */
  const labelledBy = (el: Element): Element[] => {
    const ids = el.getAttribute('aria-labelledby')?.split(/\s+/).filter(Boolean) ?? [];
    if (!ids.length) return [];
    const tree = el.getRootNode() as Document | ShadowRoot;
    return ids.map((id) => tree.getElementById?.(id)).filter((e): e is HTMLElement => !!e);
  };
  /** The name aria-labelledby gives (it comes before aria-label, as in the accessible name), else aria-label. */
  const ariaName = (el: Element): string =>
    squash(labelledBy(el).map((e) => (e === el ? '' : e.textContent ?? '')).join(' ')) || squash(el.getAttribute('aria-label'));
  /** The text an element shows, squashed; a giant one read only as far as TEXT_SCAN_CHARS (layout of all of it for innerText is slow). */
  const textOf = (el: Element): string => {
    const all = el.textContent ?? '';
    return squash(all.length > TEXT_SCAN_CHARS ? all.slice(0, TEXT_SCAN_CHARS) : hasShadowContent(el) ? renderedText(el) : (el as HTMLElement).innerText ?? all);
  };
  /** The words (letters and digits) of a text, lower-cased. */
  const wordsOf = (s: string) => s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  /** Does `text` show every word of `name` (so saying the name beside it repeats it)? */
  const wordsIn = (name: string, text: string): boolean => {
    const words = wordsOf(name);
    if (!words.length) return false;
    const shown = new Set(wordsOf(text));
    return words.every((w) => shown.has(w));
  };
  const nameOf = (el: Element): string => {
    const aria = ariaName(el);
    if (el.tagName === 'IMG') return aria || squash(el.getAttribute('alt'));
    if (isField(el)) {
      if (aria) return aria;
      if (el instanceof HTMLInputElement && ['button', 'submit', 'reset'].includes(el.type)) return squash(el.value || el.type);
      if (el instanceof HTMLInputElement && el.type === 'image') return squash(el.alt || 'submit');
      return fieldName(el);
    }
    const text = textOf(el);
    // The visible text is kept even when an aria-label names the element otherwise.
    if (aria && text) return aria.includes(text) ? aria : wordsIn(aria, text) ? text : `${text} (${aria})`;
    if (aria || text) return aria || text;
    const img = el.querySelector('img[alt]');
    return squash(el.getAttribute('title') || img?.getAttribute('alt') || el.querySelector('svg title')?.textContent);
  };
  /** Does this label name a field that takes its name from it (so its text is said there)? */
  const namesField = (el: Element) => {
    if (!(el instanceof HTMLLabelElement) || !el.control) return false;
    const f = el.control as HTMLElement;
    // A label of a field that is not rendered keeps its text (its field says nothing).
    return f.checkVisibility() && !f.hasAttribute('aria-label') && !f.hasAttribute('aria-labelledby') && (f as HTMLInputElement).labels?.[0] === el && !(f instanceof HTMLInputElement && ['button', 'submit', 'reset', 'image', 'hidden'].includes(f.type));
  };
  /** Per tree (document, shadow root): id → the elements naming it in aria-labelledby. */
  const labelUsers = new Map<Node, Map<string, Element[]>>();
  const isInRoot = (e: Element) => {
    for (let n: Node | null = e; n; n = n instanceof ShadowRoot ? n.host : n.parentNode) if (n === root) return true;
    return false;
  };
  /**
   * Does this element's text name, through aria-labelledby, a control the snapshot shows with
   * that name (so its text is said there, as a <label>'s is)? Only a shown control counts: one
   * rendered, inside the part snapshotted, whose whole name is printed. A heading, landmark or
   * control keeps its own text.
   */
  const namesControlByLabelledby = (el: Element, role: string | null): boolean => {
    if (!el.id || role === 'heading' || (role && (LANDMARK[role] || IS_ACTIONABLE.has(role)))) return false;
    const tree = el.getRootNode();
    let users = labelUsers.get(tree);
    if (!users) {
      users = new Map();
      for (const c of (tree as Document | ShadowRoot).querySelectorAll('[aria-labelledby]')) {
        for (const id of c.getAttribute('aria-labelledby')!.split(/\s+/)) if (id) users.set(id, [...(users.get(id) ?? []), c]);
      }
      labelUsers.set(tree, users);
    }
    return (users.get(el.id) ?? []).some((c) => {
      if (c === el || c.contains(el) || !c.checkVisibility({ visibilityProperty: true }) || !isInRoot(c)) return false;
      const r = roleOf(c, getComputedStyle(c));
      return r !== null && (IS_ACTIONABLE.has(r) || r === 'progressbar' || r === 'meter') && ariaName(c).length <= NAME_MAX_CHARS;
    });
  };
  const refOf = (el: Element) => {
    let ref = refs.byEl.get(el);
    if (!ref) {
      ref = `${refPrefix}e${refs.next++}`;
      refs.byEl.set(el, ref);
      refs.byRef.set(ref, el);
    }
    if (!first.has(el)) first.set(el, taken);
    last.set(el, taken);
    return ref;
  };
  /** The open modal dialog, if any (openModalDialog in dom.ts): the rest of the page cannot be used. */
  let modal: Element | null | undefined;
  const openModal = openModalDialog;
  /** Can `el` not be used now: inside [inert], or outside the open modal dialog (unreachable in dom.ts)? */
  const inert = (el: Element): boolean => {
    if (behind) return true;
    if (modal === undefined) modal = openModal();
    return unreachable(el, modal) !== null;
  };
  /** Roles whose element holds a value apart from its name (a custom widget's text is its value). */
  const VALUED = new Set(['combobox', 'textbox', 'searchbox', 'spinbutton', 'slider']);
  /**
   * One control as text: `[name](eN)` for a link, `[x] name [eN]` for a checkbox (`[-]` mixed),
   * `mark name = "value" [eN]` otherwise, with its states: (expanded)/(collapsed), (selected),
   * (pressed), (current), (invalid), (read-only), (disabled — by itself or by a disabled fieldset).
   */
  const control = (el: Element, role: string, withName: boolean): string => {
    controlMark = '';
    const ref = refOf(el);
    const valued = VALUED.has(role) && !isField(el);
    // A custom text box, combobox or slider is named by its label; its text is its value.
    let name = withName && !valued ? cut(nameOf(el), NAME_MAX_CHARS, 'see its text with browser_get_tab_content')
      : cut(ariaName(el) || squash(el.getAttribute('title') || (valued ? el.getAttribute('aria-placeholder') : '')), NAME_MAX_CHARS, 'read it with browser_query_elements');
    // A container's aria-label that only says words its content shows is not said before them.
    if (!withName && name && !valued && wordsIn(name, textOf(el))) name = '';
    const hiddenName = name !== '' && !el.hasAttribute('aria-labelledby') && name === squash(el.getAttribute('aria-label')) && (isField(el) || textOf(el) === '');
    /** Whether an earlier row of this table had a control of this role at this place (its role word is left out then). */
    let roleSaid = false;
    if (place) {
      // In a table row: a name no text shows, the same as the one at this place (cell, then
      // n-th control in it) of the first row of the table with a control there, is said there only.
      const key = `${place.cell}:${place.n++}:${role}`;
      const first = place.seen.get(key);
      if (first === undefined) place.seen.set(key, hiddenName ? name : '');
      else {
        roleSaid = true;
        if (hiddenName && first === name) name = '';
        else if (withName && name && !valued && !isField(el) && name === ariaName(el)) {
          // An aria-label made of the control's text and words the table's header row or this
          // row's earlier cells show (`Open order #10233` on an `Open` button in the row of order
          // #10233, under the column Order) is said as the text alone: the first row with such a
          // control said it whole, the row's text is the rest.
          const text = textOf(el);
          if (text && name !== text && name.includes(text) && wordsIn(name.replace(text, ' '), place.text)) name = text;
        }
      }
    }
    if (hiddenName && name) {
      // The text said just before it (on this line, else the line above) ending with its name:
      // a shown label beside a control named the same by aria-label. Not said twice.
      const before = cur.trim() || (lines.length ? lines[lines.length - 1]!.trim() : '');
      if (before.endsWith(name) && (before.length === name.length || /[^\p{L}\p{N}]/u.test(before[before.length - name.length - 1]!))) name = '';
    }
    const states: string[] = [];
    const ariaState = (attr: string) => {
      const v = el.getAttribute(attr);
      return v === null || v === 'false' || v === 'undefined' ? null : v;
    };
    if (el.tagName === 'SUMMARY' && el.parentElement instanceof HTMLDetailsElement) states.push(el.parentElement.open ? 'expanded' : 'collapsed');
    // A combobox is closed unless it says it is open: only (expanded) is said on one.
    else if (el.getAttribute('aria-expanded') && (role !== 'combobox' || el.getAttribute('aria-expanded') === 'true')) states.push(el.getAttribute('aria-expanded') === 'true' ? 'expanded' : 'collapsed');
    if ((role === 'tab' || role === 'option' || role === 'treeitem' || role === 'row' || role === 'gridcell') && el.getAttribute('aria-selected') === 'true') states.push('selected');
    const pressed = ariaState('aria-pressed');
    if (pressed) states.push(pressed === 'mixed' ? 'partly pressed' : 'pressed');
    if (ariaState('aria-current')) states.push('current');
    if (ariaState('aria-invalid')) states.push('invalid');
    if (((el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) && el.readOnly && !['checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'file', 'range', 'color'].includes(el.type)) || el.getAttribute('aria-readonly') === 'true') states.push('read-only');
    if (el.matches(':disabled') || el.getAttribute('aria-disabled') === 'true') states.push('disabled');
    else if (inert(el)) states.push('inert');
    const state = states.map((t) => ` (${t})`).join('');
    if (withName && !valued && name && !isField(el) && el.tagName !== 'IMG') {
      // `text (aria-label)`: the aria-label is said once for the same role, text and states
      // (resolved when the walk ends, see spoken), unless that text goes with several.
      const text = textOf(el);
      const aria = ariaName(el);
      if (text && aria && name === `${text} (${aria})`) name = `${text}${spoken(`${role}\n${text}\n${state}`, aria)}`;
    }
    if (role === 'link' && withName) return `[${name}](${ref})${state}`;
    const checkedAttr = el.getAttribute('aria-checked');
    const native = el instanceof HTMLInputElement && (el.type === 'checkbox' || el.type === 'radio');
    const mixed = native ? el.type === 'checkbox' && el.indeterminate : checkedAttr === 'mixed';
    const checked = native ? el.checked : checkedAttr === 'true';
    const box = mixed ? '-' : checked ? 'x' : ' ';
    if (role === 'checkbox' || role === 'switch' || role === 'menuitemcheckbox') return `[${box}]${name ? ` ${name}` : ''}${state} [${ref}]`;
    if (role === 'radio' || role === 'menuitemradio') return `(${box})${name ? ` ${name}` : ''}${state} [${ref}]`;
    let mark = MARK[role] ?? role;
    if (el instanceof HTMLInputElement && TYPED.has(el.type)) mark = el.type;
    if (el instanceof HTMLTextAreaElement) mark = 'textarea';
    let value = '';
    if (el instanceof HTMLSelectElement) {
      const chosen = [...el.selectedOptions].map((o) => squash(o.text)).join(', ');
      let options = '';
      for (const [i, o] of [...el.options].entries()) {
        const t = squash(o.text);
        if (options.length + t.length > OPTIONS_MAX_CHARS) {
          options += ` | … ${el.options.length - i} more options: browser_query_elements lists them`;
          break;
        }
        options += (i ? ' | ' : '') + t;
      }
      value = `${chosen ? ` = ${quote(chosen)}` : ''} (${options})`;
    } else if ((el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) && el.value && el.type !== 'password') {
      value = ` = ${quote(cut(el.value, NAME_MAX_CHARS, 'read it with browser_query_elements'))}`;
    } else if (el instanceof HTMLInputElement && el.type === 'password' && el.value) value = ' = (filled)';
    else if (valued && (role === 'slider' || role === 'spinbutton')) {
      const v = squash(el.getAttribute('aria-valuetext') || el.getAttribute('aria-valuenow'));
      if (v) value = ` = ${quote(cut(v, NAME_MAX_CHARS, 'read it with browser_query_elements'))}`;
    } else if (valued && withName) {
      const text = textOf(el);
      if (text) value = ` = ${quote(cut(text, TEXT_MAX_CHARS, 'browser_get_tab_content with a selector reads it all'))}`;
    }
    // In a later row of a table, a named control's role word is the first row's at that place.
    if (roleSaid && name) return `${name}${value}${state} [${ref}]`;
    // Right after a control with the same role word, nothing shown between (buttons side by
    // side, a toolbar, tabs, a listbox's options): the role word is said on the first only. A
    // field (text box, select, slider …) always says its kind: it decides how it is filled.
    const again = !interactiveOnly && !place && name !== '' && lastControl?.shown === shown && lastControl.mark === mark;
    controlMark = VALUED.has(role) ? '' : mark;
    return `${again ? name : `${mark}${name ? ` ${name}` : ''}`}${value}${state} [${ref}]`;
  };

  /**
   * What has been shown so far, counted: a text, a control, a line of its own (heading, landmark,
   * list item, row, iframe) each add one. `lastControl`: the role word of the last control
   * written with one, and the count right after it (so a control next to it with nothing shown
   * between leaves out the same role word). `controlMark`: the role word `control` just wrote.
   */
  let shown = 0;
  let lastControl: { mark: string; shown: number } | null = null;
  let controlMark = '';
  /** While a table row's cells are walked: the names seen per place in the table, and where the walk is. */
  let place: { seen: Map<string, string>; cell: number; n: number; text: string } | null = null;
  /** The key under which a table's places keep the text of its first row. */
  const FIRST_ROW = '\u0000first row';
  const placesByTable = new Map<Element, Map<string, string>>();
  /**
   * Aria-labels said beside a control's text: a mark in the text for each (PARENS_MARK, its
   * index), replaced when the walk ends by ` (label)` for the first of each key (role, text,
   * states) and for every one whose key goes with more than one label, by nothing for the rest.
   */
  const PARENS_MARK = `\u0001${Math.random().toString(36).slice(2)}:`;
  const parens: { key: string; aria: string }[] = [];
  const spoken = (key: string, aria: string) => `${PARENS_MARK}${parens.push({ key, aria }) - 1}\u0001`;
  const unmark = (text: string): string => {
    if (!parens.length) return text;
    const labels = new Map<string, Set<string>>();
    for (const p of parens) labels.set(p.key, (labels.get(p.key) ?? new Set()).add(p.aria));
    const said = new Set<string>();
    const keep = parens.map((p) => {
      if (labels.get(p.key)!.size > 1 || !said.has(p.key)) {
        said.add(p.key);
        return ` (${p.aria})`;
      }
      return '';
    });
    return text.split(PARENS_MARK).map((part, i) => {
      if (!i) return part;
      const end = part.indexOf('\u0001');
      return (keep[Number(part.slice(0, end))] ?? '') + part.slice(end + 1);
    }).join('');
  };

  // The output: finished lines, and the line being filled with inline content.
  let lines: string[] = [];
  let cur = '';
  /** What the next line starts with: a list bullet (then continuation lines are indented to match). */
  let bullet = '';
  let cont = '';
  let count = 0;
  /** Characters of text given so far (before indentation); at SNAPSHOT_MAX_CHARS the walk stops. */
  let size = 0;
  let full = false;
  /** Whether the walk left something out for being full. */
  let stopped = false;
  const grow = (n: number) => {
    size += n;
    if (size >= SNAPSHOT_MAX_CHARS) full = true;
  };
  /** Elements (and shadow roots) the walk is inside now. */
  let nesting = 0;
  const flush = () => {
    const t = cur.replace(/ {2,}/g, ' ').trim();
    cur = '';
    if (!t) return;
    lines.push((bullet || cont) + t);
    bullet = '';
  };
  const add = (s: string) => {
    if (/\S/.test(s)) shown++;
    cur += s;
    grow(s.length);
  };
  /** Renders fn's content apart and returns its lines (for a heading, cell or landmark). */
  const apart = (fn: () => void): string[] => {
    shown++;
    const saved = { lines, cur, bullet, cont };
    lines = [];
    cur = '';
    bullet = '';
    cont = '';
    fn();
    flush();
    shown++;
    const out = lines;
    ({ lines, cur, bullet, cont } = saved);
    return out;
  };
  let listDepth = 0;
  let landmarkDepth = 0;

  /** `ownTextHidden`: el's own text nodes are not shown (visibility: hidden), its elements decide for themselves. */
  const walkChildren = (el: Element, depth: number, inLabel: boolean, pre: boolean, ownTextHidden = false) => {
    if (full) {
      stopped = true;
      return;
    }
    if (nesting >= SNAPSHOT_NESTING_MAX) {
      // The walk recurses: a page nesting thousands of elements (or shadow roots) would overflow
      // the stack (or hang the tab); what is below is said to be left out, once per subtree.
      if (el.firstChild || shadowOf(el)) {
        const mark = `[elements nested more than ${SNAPSHOT_NESTING_MAX} deep are not shown: snapshot a deeper part with a selector]`;
        if (interactiveOnly) lines.push(mark);
        else add(` ${mark} `);
      }
      return;
    }
    nesting++;
    try {
      walkChildrenNow(el, depth, inLabel, pre, ownTextHidden);
    } finally {
      nesting--;
    }
  };
  const walkChildrenNow = (el: Element, depth: number, inLabel: boolean, pre: boolean, ownTextHidden: boolean) => {
    // The page as it renders: a host of an open shadow root shows its shadow tree (web components
    // drew nothing here before), a <slot> the nodes assigned to it (else its fallback content).
    for (const child of inVisualOrder(el, renderedChildren(el))) {
      if (full) {
        stopped = true;
        break;
      }
      if (child.nodeType === Node.TEXT_NODE) {
        if (inLabel || interactiveOnly || ownTextHidden) continue;
        const raw = child.textContent ?? '';
        if (raw.length > TEXT_SCAN_CHARS) {
          // A giant text: only its start is read (squashing all of it could take seconds).
          add(` ${squash(raw.slice(0, TEXT_SCAN_CHARS)).slice(0, TEXT_MAX_CHARS)}… [about ${raw.length - TEXT_MAX_CHARS} more characters: browser_get_tab_content with a selector reads it all] `);
        } else if (pre) {
          raw.split('\n').forEach((part, i) => {
            if (i) flush();
            add(part.replace(/\s+/g, ' '));
          });
        } else {
          const t = raw.replace(/\s+/g, ' ');
          add(t.trim().length > TEXT_MAX_CHARS ? ` ${cut(squash(t), TEXT_MAX_CHARS, 'browser_get_tab_content with a selector reads it all')} ` : t);
        }
      } else if (child.nodeType === Node.ELEMENT_NODE) {
        if (parts && !whole && !parts.keep.has(child as Element)) {
          // Nothing in it is listed: skipped, unless elements in it reach SNAPSHOT_NESTING_MAX
          // (then it is walked whole, for the mark). It holds no shadow root or slot, so its
          // nesting is its own elements' depth below it.
          const left = SNAPSHOT_NESTING_MAX - nesting;
          if (parts.shallow > 0 && parts.shallow <= left) continue;
          if (left > 0 && !(child as Element).querySelector(`:scope${' > *'.repeat(left)}`)) continue;
          whole++;
          try {
            walk(child as Element, depth, inLabel);
          } finally {
            whole--;
          }
          continue;
        }
        walk(child as Element, depth, inLabel);
      }
    }
  };

  /** A table row on one line: `lead`, then its cells separated by CELL_SEP, controls inline. */
  const row = (el: Element, depth: number, inLabel: boolean, lead: string) => {
    flush();
    const cells: string[] = [];
    const table = el.closest('table,[role=table],[role=grid],[role=treegrid]') ?? el.parentElement ?? el;
    let seen = placesByTable.get(table);
    if (!seen) placesByTable.set(table, (seen = new Map()));
    const outer = place;
    try {
      for (const c of el.children) {
        if (full) {
          stopped = true;
          break;
        }
        if (SKIP.has(c.tagName) || getComputedStyle(c).display === 'none') continue;
        // The context of a control in a cell: the table's first row when it is a header row, and
        // this row's cells before it.
        place = { seen, cell: cells.length, n: 0, text: `${seen.get(FIRST_ROW) ?? ''} ${cells.join(' ')}` };
        cells.push(apart(() => walk(c, depth + 1, inLabel)).join(' '));
      }
    } finally {
      place = outer;
    }
    // A header row's text (its cells th or columnheader) is context for the rows after it.
    if (!seen.has(FIRST_ROW)) seen.set(FIRST_ROW, [...el.children].some((c) => c.tagName === 'TH' || c.getAttribute('role') === 'columnheader') ? cells.join(' ') : '');
    while (cells.length && !cells[cells.length - 1]) cells.pop();
    if (cells.length || lead) lines.push(cont + lead + cells.join(CELL_SEP));
  };
  /** The checkbox or radio a label clicks when that one is not rendered itself, else null. */
  const toggleOfLabel = (el: Element): HTMLInputElement | null => {
    if (!(el instanceof HTMLLabelElement)) return null;
    const f = el.control;
    return f instanceof HTMLInputElement && (f.type === 'checkbox' || f.type === 'radio') && !f.checkVisibility() && f.labels?.[0] === el ? f : null;
  };
  let deep: Element[] | undefined;
  /** With interactiveOnly: the elements the walk goes into (see interactiveParts); null: all. */
  const parts = interactiveOnly && !readAll ? interactiveParts(root, `${ACTIONABLE_SELECTOR},a,input,label,[tabindex],[contenteditable],[role],iframe,frame,slot`) : null;
  /** Above zero while the walk is inside an element of opacity 0. */
  let transparent = 0;
  /** Above zero while the walk is inside an element walked whole (see walkChildrenNow). */
  let whole = 0;
  const walk = (el: Element, depth: number, inLabel: boolean) => {
    if (full) {
      stopped = true;
      return;
    }
    if (SKIP.has(el.tagName)) return;
    if (el.getAttribute('aria-hidden') === 'true') return;
    const cs = getComputedStyle(el);
    if (unrendered(cs)) return;
    styleOf.set(el, cs);
    const block = !cs.display.startsWith('inline') && cs.display !== 'contents';
    const pre = cs.whiteSpace.startsWith('pre') || cs.whiteSpace === 'break-spaces';
    if (cs.visibility === 'hidden') {
      // Neither it nor its text is shown; a part of it made visible again (visibility: visible) is.
      walkChildren(el, depth, inLabel, pre, true);
      return;
    }
    if ((transparent || cs.opacity === '0') && !isField(el)) {
      // Fully transparent (opacity 0, which nothing inside can undo): its text, links and buttons
      // are not seen. A field in it is listed: a see-through checkbox or file input over a drawn
      // one is what takes the click.
      transparent++;
      try {
        walkChildren(el, depth, inLabel, pre, true);
      } finally {
        transparent--;
      }
      return;
    }
    const role = roleOf(el, cs);
    const actionable = ((role !== null && IS_ACTIONABLE.has(role)) || clickable(el) || isField(el));
    if ((el.tagName === 'IFRAME' || el.tagName === 'FRAME') && (interactiveOnly || depth <= maxDepth)) {
      // A line the worker replaces with the frame's own snapshot: the caller's mark (which the
      // page cannot know, so its text cannot pose as one), the frame's index among this window's
      // frames, the iframe's name, its src (said for a frame whose content is not shown) and its
      // position among the document's iframes (framesDeepAll: one in a shadow root has no index),
      // and whether a user cannot reach it (its content then says (inert) too).
      const index = frameIndexOf(el);
      deep ??= framesDeepAll(document);
      const name = cut(squash(ariaName(el) || el.getAttribute('title') || el.getAttribute('name')), NAME_MAX_CHARS, 'read it with browser_query_elements');
      flush();
      count++;
      const line = `${interactiveOnly ? '' : bullet || cont}${frameMark}${JSON.stringify([index, name, (el as HTMLIFrameElement).src, deep.indexOf(el), inert(el)])}`;
      lines.push(line);
      grow(line.length);
      shown++;
      bullet = '';
      return;
    }
    if (el.tagName === 'BR') {
      if (!interactiveOnly) flush();
      return;
    }
    if (!interactiveOnly && actionable && role === 'row' && !isField(el)) {
      // A row that can be clicked is still a row: its ref, then its cells.
      count++;
      row(el, depth, inLabel, `${control(el, role, false)} `);
      return;
    }
    const toggle = toggleOfLabel(el);
    if (toggle) {
      // A label whose checkbox or radio is not rendered (a CSS-only toggle draws its own) is what
      // is clicked: listed as that control, with its state.
      count++;
      const box = toggle.type === 'checkbox' && toggle.indeterminate ? '-' : toggle.checked ? 'x' : ' ';
      const token = `${toggle.type === 'radio' ? `(${box})` : `[${box}]`} ${cut(labelText(el), NAME_MAX_CHARS, 'see its text with browser_get_tab_content')}${toggle.matches(':disabled') ? ' (disabled)' : inert(el) ? ' (inert)' : ''} [${refOf(el)}]`;
      if (interactiveOnly) {
        lines.push(token);
        grow(token.length + 1);
      } else add(` ${token} `);
      walkChildren(el, depth + 1, true, pre);
      return;
    }
    if (actionable) {
      count++;
      const leaf = isField(el) || !hasActionable(el);
      const token = control(el, role ?? 'clickable', leaf);
      const mark = controlMark;
      // A field gets a line of its own (so does a block-level control, as on screen).
      const ownLine = block || (isField(el) && !['button', 'submit', 'reset', 'image'].includes((el as HTMLInputElement).type));
      if (interactiveOnly) {
        lines.push(token);
        grow(token.length + 1);
      }
      else if (ownLine) {
        // On a line of its own, as on screen.
        flush();
        add(token);
        flush();
      } else add(token.startsWith('[') && role === 'link' ? token : ` ${token} `);
      // A control with controls inside is not one a next control sits beside.
      lastControl = mark && leaf ? { mark, shown } : null;
      if (leaf) return;
      walkChildren(el, depth + 1, false, pre);
      if (block && !interactiveOnly) flush();
      return;
    }
    if (interactiveOnly) {
      // A closed <details> shows only its summary: the controls in the rest are not on screen.
      if (el instanceof HTMLDetailsElement && !el.open) {
        const summary = [...el.children].find((c) => c.tagName === 'SUMMARY');
        if (summary) walk(summary, depth, false);
        return;
      }
      walkChildren(el, depth, false, pre);
      return;
    }
    if (depth > maxDepth) return;
    const landmark = role ? LANDMARK[role] : undefined;
    // A section or form is a landmark only when named (as in ARIA): an unnamed form's fields are
    // read in place, not under a `form:` line with its content indented.
    if (landmark && ((role !== 'region' && role !== 'form') || ariaName(el))) {
      flush();
      count++;
      let name = ariaName(el);
      landmarkDepth++;
      const body = apart(() => walkChildren(el, depth + 1, inLabel, pre));
      landmarkDepth--;
      // A name the landmark's own content says (its heading, or a shown label inside it) is not said twice.
      const by = labelledBy(el);
      if (by.length && by.every((e) => el.contains(e) && e.checkVisibility({ visibilityProperty: true }))) name = '';
      if (name && body[0]?.replace(/^#+ /, '') === name) name = '';
      // Nor one made of words its content shows (an aria-label repeating the text inside).
      if (name && wordsIn(name, body.join(' ').replace(/\[(?:f\d+)?e\d+\]|\]\((?:f\d+)?e\d+\)/g, ' '))) name = '';
      const head = `${landmark}${name ? ` ${name}` : ''}:`;
      // A landmark whose content is one line shares it; a landmark inside another is indented.
      const indent = cont + (landmarkDepth ? '  ' : '');
      if (body.length === 1 && !/^(- |\d+\. )/.test(body[0]!)) lines.push(`${cont}${head} ${body[0]}`);
      else lines.push(cont + head, ...body.map((l) => indent + l));
      return;
    }
    if (role === 'heading') {
      flush();
      count++;
      const level = /^H[1-6]$/.test(el.tagName) ? Number(el.tagName[1]) : Number(el.getAttribute('aria-level')) || 2;
      const text = apart(() => walkChildren(el, depth + 1, inLabel, false)).join(' ');
      if (text) lines.push(`${bullet || cont}${'#'.repeat(level)} ${text}`);
      bullet = '';
      return;
    }
    if (role === 'row') {
      count++;
      row(el, depth, inLabel, '');
      return;
    }
    if (role === 'list') {
      flush();
      // A list named by an aria-label no text shows (lists side by side on a board) says it
      // first: which items are in which list is not seen otherwise.
      const name = squash(el.getAttribute('aria-label'));
      if (name && !wordsIn(name, textOf(el))) {
        add(`list ${cut(name, NAME_MAX_CHARS, 'read it with browser_query_elements')}:`);
        flush();
      }
      listDepth++;
      const savedCont = cont;
      walkChildren(el, depth + 1, inLabel, pre);
      flush();
      cont = savedCont;
      listDepth--;
      return;
    }
    if (role === 'listitem') {
      flush();
      shown++;
      count++;
      const indent = '  '.repeat(Math.max(0, listDepth - 1));
      const savedCont = cont;
      const ol = el.parentElement?.tagName === 'OL' ? (el.parentElement as HTMLOListElement) : null;
      let n = ol ? ol.start : 0;
      if (ol) for (const sib of ol.children) if (sib === el) break; else if (sib.tagName === 'LI') n++;
      bullet = `${indent}${ol ? `${n}.` : '-'} `;
      cont = `${indent}  `;
      walkChildren(el, depth + 1, inLabel, pre);
      flush();
      bullet = '';
      cont = savedCont;
      return;
    }
    const nativeGauge = el instanceof HTMLProgressElement || el instanceof HTMLMeterElement;
    if (nativeGauge || role === 'progressbar' || role === 'meter') {
      // A bar is not text: its value is said (a <progress> or <meter>'s own content is not shown).
      const label = (el as HTMLProgressElement).labels?.[0];
      const name = cut(ariaName(el) || (label ? labelText(label) : '') || squash(el.getAttribute('title')), NAME_MAX_CHARS, 'read it with browser_query_elements');
      let value = squash(el.getAttribute('aria-valuetext'));
      if (!value && el instanceof HTMLProgressElement) value = el.position < 0 ? '' : `${Math.round(el.position * 100)}%`;
      else if (!value && el instanceof HTMLMeterElement) value = el.min === 0 && el.max === 1 ? `${Math.round(el.value * 100)}%` : `${el.value} of ${el.max}`;
      else if (!value && el.getAttribute('aria-valuenow')) {
        const [now, min, max] = [el.getAttribute('aria-valuenow'), el.getAttribute('aria-valuemin') ?? '0', el.getAttribute('aria-valuemax') ?? '100'];
        value = min === '0' && max === '100' ? `${now}%` : `${now} of ${max}`;
      }
      if (block) flush();
      add(` ${role === 'meter' || el instanceof HTMLMeterElement ? 'meter' : 'progress'}${name ? ` ${name}` : ''}${value ? ` = ${quote(value)}` : ' (indeterminate)'} `);
      if (!nativeGauge) walkChildren(el, depth, inLabel, pre);
      if (block) flush();
      return;
    }
    if (el.tagName === 'IMG') {
      const alt = nameOf(el);
      if (alt) add(` ![${alt}] `);
      return;
    }
    // A closed <details> shows only its summary.
    if (el instanceof HTMLDetailsElement && !el.open) {
      flush();
      const summary = [...el.children].find((c) => c.tagName === 'SUMMARY');
      if (summary) walk(summary, depth + 1, inLabel);
      flush();
      return;
    }
    // Preformatted text keeps its lines and their indentation (a <pre> is fenced as code).
    if (pre && block && !hasActionable(el)) {
      flush();
      const all = el.textContent ?? '';
      const text = all.length > TEXT_SCAN_CHARS
        ? `${all.slice(0, TEXT_MAX_CHARS)}… [about ${all.length - TEXT_MAX_CHARS} more characters: browser_get_tab_content with a selector reads it all]`
        : cut((el as HTMLElement).innerText.replace(/\n+$/, ''), TEXT_MAX_CHARS, 'browser_get_tab_content with a selector reads it all');
      grow(text.length);
      shown++;
      if (text.trim()) {
        const fence = el.tagName === 'PRE' ? ['```'] : [];
        lines.push(...[...fence, ...text.split('\n'), ...fence].map((l) => (bullet || cont) + l.trimEnd()));
        bullet = '';
      }
      return;
    }
    const label = namesField(el) || namesControlByLabelledby(el, role);
    // A plain container adds no depth: maxDepth counts landmarks, lists, items, rows, headings.
    if (block) flush();
    // An inline box (chips, badges, tags side by side) is apart from its neighbours on screen.
    const box = !pre && cs.display.startsWith('inline-');
    if (box) add(' ');
    walkChildren(el, depth, inLabel || label, pre);
    if (block) flush();
    if (box) add(' ');
  };
  try {
    walk(root, 0, false);
  } catch (err) {
    // Not expected with the bounds above; a clear answer rather than none if the stack runs out.
    if (err instanceof RangeError) return { error: `The page is nested too deeply to snapshot whole (${err.message}): snapshot a part with a selector` };
    throw err;
  }
  flush();
  let snapshot = unmark(lines.join('\n'));
  // A modal dialog open: said first, so that its controls are looked for before the page's.
  if (modal === undefined) modal = openModal();
  if (modal && !selector) {
    const name = ariaName(modal);
    snapshot = `(a modal dialog${name ? ` "${cut(name, NAME_MAX_CHARS, 'read it with browser_query_elements')}"` : ''} is open: only its controls can be used, the ones outside it say (inert))\n${snapshot}`;
  }
  // Indentation is not counted while walking: the whole is held to the bound at a line's end too.
  if (stopped || snapshot.length > SNAPSHOT_MAX_CHARS) snapshot = cutSnapshot(snapshot, SNAPSHOT_MAX_CHARS);
  return { url: location.href, title: document.title, elements: count, snapshot, frameIndex: indexInParent(), frameDeep: deepIndexAllInParent() };
}

/** Elements whose style attribute may set -webkit-user-modify. */
const INLINE_USER_MODIFY = '[style*="user-modify" i]';

/**
 * The selectors of the style rules in `sheets` that set -webkit-user-modify to anything but
 * read-only (in @media, @supports, @layer, @container and imported sheets too, whether or not
 * they apply now: the walk reads each element's own style), or null when such a rule is nested
 * in another style rule (its selector is relative to that one's). A sheet of another origin
 * cannot be read: it counts as setting nothing.
 */
function userModifySelectors(sheets: Iterable<CSSStyleSheet>): string[] | null {
  const out: string[] = [];
  let nested = false;
  const visit = (sheet: CSSStyleSheet, depth: number) => {
    let rules: CSSRuleList;
    try {
      rules = sheet.cssRules;
    } catch {
      return;
    }
    visitRules(rules, depth, false);
  };
  const visitRules = (rules: CSSRuleList, depth: number, inStyleRule: boolean) => {
    if (depth > 32) return;
    for (const r of rules) {
      if (r instanceof CSSImportRule) {
        if (r.styleSheet) visit(r.styleSheet, depth + 1);
        continue;
      }
      if (r instanceof CSSStyleRule) {
        const v = r.style.getPropertyValue('-webkit-user-modify').trim();
        if (v && v !== 'read-only') {
          if (inStyleRule) nested = true;
          else out.push(r.selectorText);
        }
      }
      const inner = (r as CSSGroupingRule).cssRules;
      if (inner) visitRules(inner, depth + 1, inStyleRule || r instanceof CSSStyleRule);
    }
  };
  for (const sheet of sheets) visit(sheet, 0);
  return nested ? null : out;
}

/** How deep a tree must be for interactiveParts to say so: below it, nothing skipped can reach the nesting bound until the walk is this close to it. */
const SHALLOW_TREE = 64;

/**
 * For browser_snapshot with interactiveOnly, which lists only controls and iframes: the elements
 * under `root` on the way to one (an element matching `selector`, which matches every element that
 * can be a control, iframes, and slots), to a shadow host or to a slot, with all their ancestors
 * in their own tree (`keep`). Any other element holds nothing listed: the walk need not go into
 * it, unless its elements reach the nesting bound (the walk then says what it left out there).
 * `shallow`: SHALLOW_TREE when no tree (the document's, each open shadow root's) is that deep,
 * else 0. Found with selectors in each tree, not by reading every element's style. Null (go into
 * every element) when a shadow tree has an editable part: content slotted into it is editable
 * without an attribute of its own. An element editable through CSS alone (-webkit-user-modify,
 * no contenteditable attribute) is found by the selectors of the style rules that set it (and
 * its style attribute); one set inside a shadow tree, in a rule nested in another or whose
 * selector cannot be used also means null. Rules in a style sheet of another origin cannot be
 * read from the page: an element they alone make editable is not found.
 */
export function interactiveParts(root: Element, selector: string): { keep: Set<Element>; shallow: number } | null {
  const keep = new Set<Element>();
  const keepUp = (from: Element) => {
    for (let e: Element | null = from; e && !keep.has(e); e = e.parentElement) keep.add(e);
  };
  const trees: (Element | ShadowRoot)[] = [root];
  const rootShadow = shadowOf(root);
  if (rootShadow) {
    keepUp(root);
    trees.push(rootShadow);
  }
  let shallow = SHALLOW_TREE;
  const documentEdits = userModifySelectors([...document.styleSheets, ...(document.adoptedStyleSheets ?? [])]);
  if (documentEdits === null) return null;
  for (let i = 0; i < trees.length; i++) {
    const tree = trees[i]!;
    if (!(tree instanceof Element)) {
      if (tree.querySelector(`[contenteditable]:not([contenteditable=false]),${INLINE_USER_MODIFY}`)) return null;
      if (userModifySelectors([...tree.styleSheets, ...(tree.adoptedStyleSheets ?? [])])?.length !== 0) return null;
    }
    if (tree instanceof Element && tree.matches(selector)) keepUp(tree);
    for (const e of tree.querySelectorAll(selector)) keepUp(e);
    if (tree instanceof Element) {
      for (const edit of [...documentEdits, INLINE_USER_MODIFY]) {
        try {
          if (tree.matches(edit)) keepUp(tree);
          for (const e of tree.querySelectorAll(edit)) keepUp(e);
        } catch {
          return null;
        }
      }
    }
    for (const e of tree.querySelectorAll('*')) {
      const shadow = shadowOf(e);
      if (!shadow) continue;
      keepUp(e);
      trees.push(shadow);
    }
    // An element SHALLOW_TREE deep (counted from the root, or from a shadow root whose top elements are 1 deep).
    if (shallow && tree.querySelector(tree instanceof Element ? `:scope${' > *'.repeat(SHALLOW_TREE)}` : `*${' > *'.repeat(SHALLOW_TREE - 1)}`)) shallow = 0;
  }
  return { keep, shallow };
}
