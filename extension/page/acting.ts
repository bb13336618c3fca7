/**
 * In-page halves of the acting tools (click, hover, type, press, select, scroll, drag, fill a
 * form, mark an element for the DevTools-protocol tools): finding elements by CSS selector
 * (piercing open shadow roots) or by a browser_snapshot ref.
 */
import { describeElement, elementAtPoint, findElement, foreignUiAt, modalName, openModalDialog, unreachable, unreachableWords, userEditable } from './dom.ts';

export type Point = { x: number; y: number; tag: string; text: string };

/** The focused element, looking into shadow roots (open ones; a closed one's host stands for it). */
function deepActiveElement(): Element | null {
  let a: Element | null = document.activeElement;
  for (let i = 0; i < 32 && a?.shadowRoot?.activeElement; i++) a = a.shadowRoot.activeElement;
  return a;
}

/** Whether `n` is `el` or inside it, shadow roots included. */
function within(n: Node | null, el: Element): boolean {
  for (let i = 0; n && i < 10_000; i++, n = n.parentNode ?? (n as ShadowRoot).host ?? null) if (n === el) return true;
  return false;
}

/** Said after a focus taken away, when a modal dialog is open (it is what usually keeps the focus). */
function openDialogNote(): string {
  const d = openModalDialog();
  if (!d) return '';
  const name = modalName(d);
  return ` (a modal dialog${name ? ` "${name}"` : ''} is open)`;
}

/**
 * Find the element, scroll it to the middle of the viewport and return its centre in viewport CSS
 * pixels. `focus` also focuses it (for typing).
 */
export function locate(selector: string | null, ref: string | null, focus: boolean, clear: boolean, takesText = false): Point | { error: string } {
  const el = findElement(selector, ref);
  if (!(el instanceof Element)) return { error: el.error };
  el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' as ScrollBehavior });
  const r = el.getBoundingClientRect();
  if (r.width === 0 || r.height === 0) return { error: `The element ${ref ?? selector} is not visible (no box)` };
  if (!focus) {
    // A mouse event goes to whatever is at the point, not to the element: say so instead of
    // reporting a click that reached nothing, or another element.
    const x = r.left + r.width / 2;
    const y = r.top + r.height / 2;
    const visibility = getComputedStyle(el).visibility;
    if (visibility === 'hidden' || visibility === 'collapse') return { error: `The element ${ref ?? selector} is not visible (visibility: ${visibility})` };
    if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) {
      return { error: `The element ${ref ?? selector} is outside the page's visible area (its centre is at ${Math.round(x)},${Math.round(y)}; the viewport is ${innerWidth}×${innerHeight}) and cannot be scrolled into view` };
    }
    const hit = elementAtPoint(x, y);
    const inside = (n: Node | null): boolean => within(n, el);
    // A label's click reaches its control (custom checkboxes draw the label over the input).
    const forwards = hit?.closest('label')?.control === el;
    if (hit && !inside(hit) && !forwards) {
      return { error: `The element ${ref ?? selector} is covered by ${describeElement(hit)} at its centre: the mouse would reach that element instead. Close or move what covers it, or act on that element` };
    }
  }
  const NOT_TEXT = ['button', 'submit', 'reset', 'image', 'checkbox', 'radio', 'file', 'range', 'color', 'hidden'];
  const takesTyping = (e: Element) => e instanceof HTMLTextAreaElement || (e instanceof HTMLInputElement && !NOT_TEXT.includes(e.type)) || userEditable(e);
  let into = el;
  if (takesText) {
    // Text typed into anything else goes nowhere: say so instead of reporting it typed.
    const field = el instanceof HTMLTextAreaElement || (el instanceof HTMLInputElement && !NOT_TEXT.includes(el.type)) ? el : null;
    if (!field && !userEditable(el)) {
      return { error: `The element ${ref ?? selector} is a <${el.tagName.toLowerCase()}${el instanceof HTMLInputElement ? ` type=${el.type}` : ''}>, which takes no typed text; pass a text field, a textarea or an editable element` };
    }
    if (field?.disabled) return { error: `The field ${ref ?? selector} is disabled: typing into it changes nothing` };
    if (field?.readOnly) return { error: `The field ${ref ?? selector} is read-only: typing into it changes nothing` };
  }
  if (focus) {
    (el as HTMLElement).focus();
    // A page can take focus elsewhere as it comes (a modal dialog keeping focus in it, a field
    // handing it on): the keys would go to that element, not to the one named.
    // (An element that cannot take focus leaves it where it was, as a click on it would.)
    const focusable = ((el as HTMLElement).tabIndex >= 0 || el.hasAttribute('tabindex') || userEditable(el)) && !el.matches(':disabled');
    const now = deepActiveElement();
    // (Focus gone on into an iframe is judged by the tools' key guard, which knows the frames.)
    const intoFrame = now?.tagName === 'IFRAME' || now?.tagName === 'FRAME';
    if (focusable && now && !intoFrame && now !== el && now !== document.body && !within(now, el) && !(within(el, now) && userEditable(now))) {
      // Unless the page put that element in its place (a "Write a comment…" field that opens the
      // editor as it gets the focus, and goes): the text goes there, as a person's would.
      const replaced = !el.isConnected || !el.checkVisibility();
      if (!replaced || (takesText && !takesTyping(now))) {
        return { error: `The element ${ref ?? selector} did not keep the focus: the page moved it to ${describeElement(now)}${openDialogNote()}. Keys and text would go there; close what holds the focus, or act on that element` };
      }
      into = now;
    }
    const field = into instanceof HTMLInputElement || into instanceof HTMLTextAreaElement ? into : null;
    if (clear) {
      if (field) field.select();
      else if (userEditable(into)) document.getSelection()?.selectAllChildren(into);
    } else if (field) {
      // Type after the existing text, as a user clicking into the field would.
      try {
        field.setSelectionRange(field.value.length, field.value.length);
      } catch {} // email/number inputs have no selection API
    } else if (userEditable(into)) {
      document.getSelection()?.selectAllChildren(into);
      document.getSelection()?.collapseToEnd();
    }
  }
  return { x: r.left + r.width / 2, y: r.top + r.height / 2, tag: into.tagName.toLowerCase(), text: ((into as HTMLElement).innerText ?? '').trim().slice(0, 80) };
}

/** Choose an option by value or visible label and fire input + change like a user would. */
export function selectInPage(selector: string | null, ref: string | null, value: string | null, label: string | null) {
  const el = findElement(selector, ref);
  if (!(el instanceof Element)) return { error: el.error };
  if (!(el instanceof HTMLSelectElement)) {
    // A custom select (a combobox, a button opening a listbox, the listbox itself) takes no value
    // set from outside: its script acts on clicks and keys only.
    const role = el.getAttribute('role') ?? '';
    const popup = el.getAttribute('aria-haspopup');
    const custom = ['combobox', 'listbox', 'option', 'menu', 'menuitem'].includes(role) || (popup !== null && popup !== 'false') || el.closest('[role=combobox],[role=listbox]') !== null;
    const how = custom
      ? `: it is a custom select${role ? ` (role ${role})` : ''}, which the page's script runs. Choose as a person does: open it with browser_click_element (a combobox that filters: browser_type_text into it), take a new browser_snapshot, and click the option by its ref (or press ArrowDown and Enter with browser_press_key)`
      : `; browser_select_option chooses in a <select> only (for anything else, click what you would click by hand with browser_click_element)`;
    return { error: `${ref ?? selector} is a <${el.tagName.toLowerCase()}>, not a <select>${how}` };
  }
  // A person cannot change a disabled select, and its form does not send it (as browser_fill_form says).
  if (el.disabled) return { error: `${ref ?? selector} is disabled: choosing an option changes nothing the page would use` };
  const opt = [...el.options].find((o) => (value !== null ? o.value === value : o.label.trim() === label || o.text.trim() === label));
  if (!opt) return { error: `No option ${value !== null ? `with value "${value}"` : `labelled "${label}"`}; options: ${[...el.options].map((o) => o.label).join(', ')}` };
  el.value = opt.value;
  el.dispatchEvent(new Event('input', { bubbles: true }));
  el.dispatchEvent(new Event('change', { bubbles: true }));
  return { value: opt.value, label: opt.label };
}

/** Scroll an element into view, to a position, or by a distance in a direction. */
export function scrollInPage(selector: string | null, ref: string | null, direction: string | null, distance: number, x: number | null, y: number | null) {
  if (selector || ref) {
    const el = findElement(selector, ref);
    if (!(el instanceof Element)) return { error: el.error };
    el.scrollIntoView({ block: 'center', behavior: 'instant' as ScrollBehavior });
  } else if (x !== null || y !== null) {
    window.scrollTo({ left: x ?? scrollX, top: y ?? scrollY, behavior: 'instant' as ScrollBehavior });
  } else {
    const d = direction ?? 'down';
    const dx = d === 'left' ? -distance : d === 'right' ? distance : 0;
    const dy = d === 'up' ? -distance : d === 'down' ? distance : 0;
    window.scrollBy({ left: dx, top: dy, behavior: 'instant' as ScrollBehavior });
  }
  return { scrollX: Math.round(scrollX), scrollY: Math.round(scrollY), scrollHeight: document.documentElement.scrollHeight, viewportHeight: innerHeight };
}

/** The element at a viewport point, the viewport's size, and the host of another extension's controls drawn there (foreignUiAt). */
export function hitAt(x: number, y: number) {
  const el = document.elementFromPoint(x, y);
  const foreign = foreignUiAt(x, y);
  return {
    viewport: { width: innerWidth, height: innerHeight },
    hit: el ? { tag: el.tagName.toLowerCase(), id: el.id || undefined, text: ((el as HTMLElement).innerText ?? '').trim().slice(0, 80) } : null,
    ...(foreign ? { foreignUi: foreign.localName } : {}),
  };
}

/** Find a drag's source and target, bring both into view and return their centres in viewport CSS pixels. */
export function dragPoints(srcSel: string | null, srcRef: string | null, dstSel: string | null, dstRef: string | null) {
  const find = (sel: string | null, ref: string | null, what: string): Element | { error: string; validation?: boolean } => {
    if (sel !== null && ref !== null) return { error: `Pass either ${what}Selector or ${what}Ref, not both`, validation: true };
    if (sel === null && ref === null) return { error: `Pass ${what}Selector or ${what}Ref`, validation: true };
    const el = findElement(sel, ref);
    return el instanceof Element ? el : { ...el, error: `The drag's ${what}: ${el.error}` };
  };
  const src = find(srcSel, srcRef, 'source');
  if (!(src instanceof Element)) return src;
  const dst = find(dstSel, dstRef, 'target');
  if (!(dst instanceof Element)) return dst;
  const inView = (r: DOMRect) => r.width > 0 && r.height > 0 && r.left + r.width / 2 >= 0 && r.top + r.height / 2 >= 0 && r.left + r.width / 2 < innerWidth && r.top + r.height / 2 < innerHeight;
  src.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' as ScrollBehavior });
  if (!inView(dst.getBoundingClientRect())) dst.scrollIntoView({ block: 'nearest', inline: 'nearest', behavior: 'instant' as ScrollBehavior });
  const a = src.getBoundingClientRect();
  const b = dst.getBoundingClientRect();
  if (a.width === 0 || a.height === 0) return { error: 'The source element is not visible (no box)' };
  if (b.width === 0 || b.height === 0) return { error: 'The target element is not visible (no box)' };
  if (!inView(a) || !inView(b)) return { error: 'The source and the target do not fit in the visible page together; make the window larger or scroll a container so both show' };
  // Not from or onto another extension's own controls drawn over either end.
  for (const [what, r] of [['source', a], ['target', b]] as const) {
    const foreign = foreignUiAt(r.left + r.width / 2, r.top + r.height / 2);
    if (foreign) return { error: `The drag's ${what} is covered at its centre by <${foreign.localName}>, another extension's own controls drawn in the page: the drag would reach them instead` };
  }
  const label = (el: Element) => ({ tag: el.tagName.toLowerCase(), text: ((el as HTMLElement).innerText ?? '').trim().slice(0, 80) });
  return { from: { x: a.left + a.width / 2, y: a.top + a.height / 2, ...label(src) }, to: { x: b.left + b.width / 2, y: b.top + b.height / 2, ...label(dst) } };
}

/**
 * Replace what an editable element holds with `value` as typing would: its content selected, then
 * for each line a beforeinput of insertText (and insertParagraph between lines), or for an empty
 * value one of deleteContentBackward. A rich-text editor (ProseMirror, Lexical, Slate) cancels
 * these and applies them to its own document; one the page does not cancel is done by the browser's
 * editing command, which changes the DOM and fires input. Setting innerText instead changed the DOM
 * only: such an editor kept its old document and drew it back at its next change.
 */
function editText(el: Element, value: string): void {
  (el as HTMLElement).focus();
  document.getSelection()?.selectAllChildren(el);
  const step = (inputType: string, data: string | null, command: string, arg?: string) => {
    const e = new InputEvent('beforeinput', { inputType, data, bubbles: true, cancelable: true, composed: true });
    if (el.dispatchEvent(e)) document.execCommand(command, false, arg);
  };
  if (value === '') return step('deleteContentBackward', null, 'delete');
  for (const [n, line] of value.split(/\r\n|\r|\n/).entries()) {
    if (n > 0) step('insertParagraph', null, 'insertParagraph');
    if (line) step('insertText', line, 'insertText', line);
  }
}

export interface FieldSpec {
  selector?: string;
  ref?: string;
  value?: string;
  checked?: boolean;
}

/**
 * browser_fill_form: each field's value is set through the element's own property setter (what
 * frameworks such as React listen to), then input and change fire as when a user edits it.
 */
export function fillInPage(fields: FieldSpec[]) {
  const done: { field: string; kind: string; value?: string; checked?: boolean }[] = [];
  const fire = (el: Element) => {
    el.dispatchEvent(new Event('input', { bubbles: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
  };
  const setNative = (el: HTMLInputElement | HTMLTextAreaElement, value: string) => {
    const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
    Object.getOwnPropertyDescriptor(proto, 'value')?.set?.call(el, value);
  };
  // A field a user cannot reach (behind an open modal dialog, or in [inert]) is not set from script
  // either: browser_snapshot says (inert) for it, by the same rule (unreachable in dom.ts).
  const blocked = (i: number, el: Element): string | null => {
    const why = unreachable(el);
    if (!why) return null;
    const name = fields[i]!.ref ?? fields[i]!.selector;
    if (why === 'inert') return `fields[${i}]: ${name} is ${unreachableWords(why)}, which a user cannot reach: it was not filled`;
    return `fields[${i}]: ${name} is ${unreachableWords(why)}, which a user cannot reach until it is closed: it was not filled. Fill the dialog's own fields, or close it first (its close or cancel button with browser_click_element)`;
  };
  // Checked for every field before any is set: a refused call leaves the page as it was.
  for (const [i, f] of fields.entries()) {
    if ((f.ref === undefined) === (f.selector === undefined)) continue;
    const el = findElement(f.selector ?? null, f.ref ?? null);
    const refused = el instanceof Element ? blocked(i, el) : null;
    if (refused) return { done, error: refused, code: 'invalid_arguments' };
  }
  for (const [i, f] of fields.entries()) {
    const name = f.ref ?? f.selector ?? `fields[${i}]`;
    if ((f.ref === undefined) === (f.selector === undefined)) return { done, error: `fields[${i}]: give either selector or ref`, code: 'invalid_arguments' };
    const el = findElement(f.selector ?? null, f.ref ?? null);
    if (!(el instanceof Element)) return { done, error: `fields[${i}]: ${el.error}`, code: el.validation ? 'invalid_arguments' : 'not_found' };
    if ((el as HTMLInputElement).disabled) return { done, error: `fields[${i}]: ${name} is disabled`, code: 'invalid_arguments' };
    // Again as it comes: setting a field before it can open a modal dialog.
    const refused = blocked(i, el);
    if (refused) return { done, error: refused, code: 'invalid_arguments' };
    (el as HTMLElement).focus?.();
    if (el instanceof HTMLInputElement && (el.type === 'checkbox' || el.type === 'radio')) {
      const want = f.checked ?? (f.value !== undefined ? el.value === f.value : true);
      if (el.checked !== want) {
        // A click toggles like a user would (and radio groups update); a radio cannot be unchecked by clicking.
        if (el.type === 'radio' && !want) el.checked = false;
        else el.click();
      }
      done.push({ field: name, kind: el.type, checked: el.checked });
    } else if (el instanceof HTMLSelectElement) {
      if (f.value === undefined) return { done, error: `fields[${i}]: a select needs value (an option's value or label)`, code: 'invalid_arguments' };
      const opt = [...el.options].find((o) => o.value === f.value) ?? [...el.options].find((o) => o.label.trim() === f.value || o.text.trim() === f.value);
      if (!opt) return { done, error: `fields[${i}]: ${name} has no option "${f.value}" (options: ${[...el.options].map((o) => o.label.trim() || o.value).join(', ')})`, code: 'invalid_arguments' };
      el.value = opt.value;
      fire(el);
      done.push({ field: name, kind: 'select', value: opt.value });
    } else if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) {
      if (f.value === undefined) return { done, error: `fields[${i}]: ${name} needs value`, code: 'invalid_arguments' };
      setNative(el, f.value);
      fire(el);
      done.push({ field: name, kind: el instanceof HTMLTextAreaElement ? 'textarea' : el.type, value: el.value });
    } else if (userEditable(el)) {
      if (f.value === undefined) return { done, error: `fields[${i}]: ${name} needs value`, code: 'invalid_arguments' };
      editText(el, f.value);
      done.push({ field: name, kind: 'contenteditable', value: f.value });
    } else {
      return { done, error: `fields[${i}]: ${name} is a <${el.tagName.toLowerCase()}>, not a form field`, code: 'invalid_arguments' };
    }
  }
  return { done };
}

/** What the DevTools-protocol tools learn of an element found for them. */
export interface Described {
  tag: string;
  type: string;
  id: string;
  text: string;
  multiple: boolean;
}

/**
 * Find the element and add `mark` to its data-opentabs-node attribute, where an isolated world of
 * the worker's DevTools session finds it (element-node.ts).
 */
export function markInPage(selector: string | null, ref: string | null, mark: string): Described | { error: string; validation?: boolean } {
  const el = findElement(selector, ref);
  if (!(el instanceof Element)) return el;
  // Added to marks already there: two calls at once on one element each find it by their own mark.
  const marks = el.getAttribute('data-opentabs-node');
  el.setAttribute('data-opentabs-node', marks ? `${marks} ${mark}` : mark);
  return {
    tag: el.tagName.toLowerCase(),
    type: el instanceof HTMLInputElement ? el.type : '',
    id: el.id,
    text: ((el as HTMLElement).innerText ?? '').trim().slice(0, 80),
    multiple: el instanceof HTMLInputElement && el.multiple,
  };
}
