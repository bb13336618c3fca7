/**
 * browser_snapshot: the page as an indented outline an agent can read and act on, in plain text:
 *   - heading "Orders" [level=2]
 *   - link "Invoices" [ref=e4]
 *   - textbox "Email" value="a@b.c" [ref=e7]
 *   - row "Jan | 12 | paid"
 *   - text "All visible text is kept …"
 * Honest compaction, not cutting: every visible text is kept (a text longer than TEXT_MAX_CHARS is
 * elided with an explicit mark saying how to read the rest); refs go only to what can be acted on
 * (links, buttons, fields, elements with a click handler or tabindex), so the other tools can
 * target them; a label is not listed beside the field it names (the field carries it); a list
 * item or cell repeats no text its children show; a table row whose cells hold only text is one
 * line. Runs in the page (ISOLATED world, where refs live).
 */
export function snapshotPage(selector: string | null, maxDepth: number, interactiveOnly: boolean) {
  const TEXT_MAX_CHARS = 2000;
  const NAME_MAX_CHARS = 300;
  const g = globalThis as unknown as { __opentabs_refs__?: { next: number; byRef: Map<string, Element>; byEl: WeakMap<Element, string> } };
  const refs = (g.__opentabs_refs__ ??= { next: 1, byRef: new Map(), byEl: new WeakMap() });
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
    H5: 'heading', H6: 'heading', DIALOG: 'dialog', OPTION: 'option', SUMMARY: 'button', LABEL: 'label',
  };
  const INPUT: Record<string, string> = { checkbox: 'checkbox', radio: 'radio', button: 'button', submit: 'button', reset: 'button', range: 'slider', search: 'searchbox', number: 'spinbutton', image: 'button', file: 'button' };
  const ACTIONABLE = new Set(['link', 'button', 'textbox', 'searchbox', 'checkbox', 'radio', 'combobox', 'slider', 'spinbutton', 'option', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab', 'switch', 'treeitem']);
  /** Roles whose name is their own text (children that only repeat it are not listed). */
  const NAMED_BY_TEXT = new Set(['link', 'button', 'heading', 'option', 'tab', 'menuitem', 'listitem', 'cell', 'columnheader', 'treeitem']);
  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'SVG', 'svg', 'HEAD']);
  const roleOf = (el: Element): string | null => {
    const explicit = el.getAttribute('role');
    if (explicit) return explicit.split(' ')[0]!;
    if (el.tagName === 'INPUT') return (el as HTMLInputElement).type === 'hidden' ? null : (INPUT[(el as HTMLInputElement).type] ?? 'textbox');
    if (el.tagName === 'A' && !el.hasAttribute('href')) return null;
    if ((el as HTMLElement).isContentEditable && el.parentElement && !(el.parentElement as HTMLElement).isContentEditable) return 'textbox';
    return IMPLICIT[el.tagName] ?? null;
  };
  const squash = (s: string | null | undefined) => (s ?? '').replace(/\s+/g, ' ').trim();
  const cut = (s: string, max: number, how: string) => (s.length <= max ? s : `${s.slice(0, max)}… [${s.length - max} more characters: ${how}]`);
  const quote = (s: string) => JSON.stringify(s);
  const clickable = (el: Element) => el.hasAttribute('onclick') || (el.hasAttribute('tabindex') && el.getAttribute('tabindex') !== '-1');
  const hasActionable = (el: Element) => el.querySelector('a[href],button,input:not([type=hidden]),select,textarea,[role],[onclick],[tabindex]:not([tabindex="-1"]),[contenteditable=""],[contenteditable=true]') !== null;
  const fieldName = (el: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement) =>
    squash(el.getAttribute('aria-label') || el.labels?.[0]?.textContent || el.getAttribute('placeholder') || el.getAttribute('title') || el.getAttribute('name'));
  const nameOf = (el: Element, role: string): string => {
    const aria = el.getAttribute('aria-label');
    if (aria) return squash(aria);
    const by = el.getAttribute('aria-labelledby');
    if (by) return squash(by.split(' ').map((id) => document.getElementById(id)?.textContent ?? '').join(' '));
    if (el.tagName === 'IMG') return squash(el.getAttribute('alt'));
    if (el instanceof HTMLInputElement || el instanceof HTMLSelectElement || el instanceof HTMLTextAreaElement) return fieldName(el);
    if (NAMED_BY_TEXT.has(role) && !hasActionable(el)) return squash((el as HTMLElement).innerText ?? el.textContent);
    return squash(el.getAttribute('title'));
  };
  const hidden = (el: Element) => {
    if ((el as HTMLElement).hidden || el.getAttribute('aria-hidden') === 'true') return true;
    const cs = getComputedStyle(el);
    return cs.display === 'none' || cs.visibility === 'hidden';
  };
  const refOf = (el: Element) => {
    let ref = refs.byEl.get(el);
    if (!ref) {
      ref = `e${refs.next++}`;
      refs.byEl.set(el, ref);
      refs.byRef.set(ref, el);
    }
    return ref;
  };
  const lines: string[] = [];
  let count = 0;
  const indent = (d: number) => '  '.repeat(interactiveOnly ? 0 : d);
  const textLine = (text: string, depth: number) => {
    const t = squash(text);
    if (t && !interactiveOnly) lines.push(`${indent(depth)}- text ${quote(cut(t, TEXT_MAX_CHARS, 'browser_get_tab_content with a selector reads it all'))}`);
  };
  /** A row whose cells hold only text: one line, cells joined by " | ". */
  const plainRow = (el: Element): string | null => {
    if (el.tagName !== 'TR' || hasActionable(el)) return null;
    return [...el.children].filter((c) => !hidden(c)).map((c) => squash((c as HTMLElement).innerText ?? c.textContent)).join(' | ');
  };
  /** The text of a row's cells that hold no control, joined by " | ". */
  const controlRowText = (el: Element): string =>
    [...el.children].filter((c) => !hidden(c) && !hasActionable(c)).map((c) => squash((c as HTMLElement).innerText ?? c.textContent)).filter(Boolean).join(' | ');
  const walk = (el: Element, depth: number, suppressText: boolean) => {
    if (SKIP.has(el.tagName) || hidden(el)) return;
    // A label that names a field: the field carries its text; its other content is still walked.
    const namesField = el instanceof HTMLLabelElement && el.control !== null;
    const role = namesField ? null : roleOf(el);
    const actionable = (role !== null && ACTIONABLE.has(role)) || clickable(el);
    // A list item that only wraps one element (a nav link, say) adds a line and no information.
    const wrapperOnly = role === 'listitem' && !actionable && el.children.length === 1 && !squash(el.textContent ?? '').replace(squash(el.children[0]!.textContent ?? ''), '');
    const show = !wrapperOnly && (!interactiveOnly ? role !== null || actionable : actionable);
    let childDepth = depth;
    if (show && depth <= maxDepth) {
      const r = role ?? 'clickable';
      const row = plainRow(el);
      const parts = [`${indent(depth)}- ${r}`];
      const name = row ?? (el.tagName === 'TR' ? controlRowText(el) : nameOf(el, r));
      if (name) parts.push(quote(actionable ? cut(name, NAME_MAX_CHARS, 'see its text with browser_get_tab_content') : cut(name, TEXT_MAX_CHARS, 'browser_get_tab_content with a selector reads it all')));
      if (r === 'heading' && /^H[1-6]$/.test(el.tagName)) parts.push(`[level=${el.tagName.slice(1)}]`);
      if (el instanceof HTMLInputElement && (el.type === 'checkbox' || el.type === 'radio')) parts.push(el.checked ? '[checked]' : '[unchecked]');
      else if ((el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement) && el.value) parts.push(`value=${quote(cut(el.value, NAME_MAX_CHARS, 'read it with browser_query_elements'))}`);
      if ((el as HTMLButtonElement).disabled) parts.push('[disabled]');
      if (actionable) parts.push(`[ref=${refOf(el)}]`);
      lines.push(parts.join(' '));
      count++;
      childDepth = depth + 1;
      // Its name already is all of its text.
      if (row !== null || (name && NAMED_BY_TEXT.has(r) && !hasActionable(el))) return;
      if (el.tagName === 'TR') {
        // A row with controls: its plain cells go on the row line, only the controls' cells below.
        for (const cell of el.children) if (!hidden(cell) && hasActionable(cell)) for (const c of cell.childNodes) {
          if (c.nodeType === Node.TEXT_NODE) textLine(c.textContent ?? '', childDepth);
          else if (c.nodeType === Node.ELEMENT_NODE) walk(c as Element, childDepth, false);
        }
        return;
      }
      if (el instanceof HTMLSelectElement || el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) return;
    }
    if (childDepth > maxDepth + 1) return;
    for (const child of el.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) {
        // A field's label text is the field's name already.
        if (!suppressText && !namesField) textLine(child.textContent ?? '', childDepth);
      } else if (child.nodeType === Node.ELEMENT_NODE) walk(child as Element, childDepth, namesField);
    }
  };
  walk(root, 0, false);
  return { url: location.href, title: document.title, elements: count, snapshot: lines.join('\n') };
}
