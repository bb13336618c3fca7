/**
 * browser_fill_form: many fields in one call, done in the page (no debugger, so no debugging bar):
 * the value is set through the element's own property setter (what frameworks such as React
 * listen to), then input and change events fire as when a user edits the field.
 */
import { ToolError } from '../shared/tool-error.ts';
import { frameOfRef } from './frame-ref.ts';
import { frameTarget, untilPageFree } from './frames.ts';
import type { Handlers } from './types.ts';

interface FieldSpec {
  selector?: string;
  ref?: string;
  value?: string;
  checked?: boolean;
}

/** In the page (ISOLATED world, where snapshot refs live). */
function fillInPage(fields: FieldSpec[]) {
  const refs = (globalThis as unknown as { __opentabs_refs__?: { byRef: Map<string, Element> } }).__opentabs_refs__;
  const done: { field: string; kind: string; value?: string; checked?: boolean }[] = [];
  const fire = (el: Element) => {
    el.dispatchEvent(new Event('input', { bubbles: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
  };
  const setNative = (el: HTMLInputElement | HTMLTextAreaElement, value: string) => {
    const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
    Object.getOwnPropertyDescriptor(proto, 'value')?.set?.call(el, value);
  };
  for (const [i, f] of fields.entries()) {
    const name = f.ref ?? f.selector ?? `fields[${i}]`;
    if ((f.ref === undefined) === (f.selector === undefined)) return { done, error: `fields[${i}]: give either selector or ref`, code: 'invalid_arguments' };
    let el: Element | null | undefined;
    if (f.ref !== undefined) {
      el = refs?.byRef.get(f.ref);
      if (!el || !el.isConnected) return { done, error: `fields[${i}]: unknown or stale ref ${f.ref}; take a new browser_snapshot`, code: 'not_found' };
    } else {
      try {
        el = document.querySelector(f.selector!);
      } catch {
        return { done, error: `fields[${i}]: invalid CSS selector ${f.selector}`, code: 'invalid_arguments' };
      }
      if (!el) return { done, error: `fields[${i}]: no element matches ${f.selector}${document.querySelector('iframe, frame') ? ' (the content of the page\'s iframes is not searched; browser_snapshot gives refs for what they hold)' : ''}`, code: 'not_found' };
    }
    if ((el as HTMLInputElement).disabled) return { done, error: `fields[${i}]: ${name} is disabled`, code: 'invalid_arguments' };
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
    } else if ((el as HTMLElement).isContentEditable) {
      (el as HTMLElement).innerText = f.value ?? '';
      fire(el);
      done.push({ field: name, kind: 'contenteditable', value: f.value ?? '' });
    } else {
      return { done, error: `fields[${i}]: ${name} is a <${el.tagName.toLowerCase()}>, not a form field`, code: 'invalid_arguments' };
    }
  }
  return { done };
}

export const formTools = {
  async browser_fill_form(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const fields = input.fields;
    // One script fills them all, in one document: the top page (selectors, eN refs) or one iframe (fFeN refs).
    const frameIds = [...new Set(fields.map((f) => frameOfRef(f.ref)))];
    if (frameIds.length > 1) {
      throw new ToolError('The fields are in different frames (refs fFeN name an iframe\'s element, selectors and eN refs the top page): fill each frame\'s fields in a call of its own', { code: 'invalid_arguments', category: 'validation' });
    }
    const target = await frameTarget(tab.id!, frameIds[0] ?? 0, fields.find((f) => f.ref !== undefined)?.ref);
    // Nothing filled once the caller was told the call failed (a busy page held the script up).
    await untilPageFree(target, ctx.signal);
    const [res] = await chrome.scripting.executeScript({ target, world: 'ISOLATED', func: fillInPage, args: [fields] });
    const r = res?.result as ReturnType<typeof fillInPage> | undefined;
    if (!r) throw new ToolError(`Tab ${tab.id} cannot be scripted`, { code: 'not_available', category: 'validation' });
    if ('error' in r && r.error) {
      const filled = r.done.length ? ` (filled before it: ${r.done.map((d) => d.field).join(', ')})` : '';
      throw new ToolError(`${r.error}${filled}`, { code: r.code ?? 'invalid_arguments', category: r.code === 'not_found' ? 'not_found' : 'validation' });
    }
    return { value: { filled: r.done.length, fields: r.done } };
  },
} satisfies Partial<Handlers>;
