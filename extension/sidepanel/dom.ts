/** Tiny DOM helpers for the side panel (no framework: the panel re-renders from state). */
import type { Permission } from '../../server/protocol/methods.ts';
import { UNSHOWN } from '../../server/shown-text.ts';
import { ARM_MS, stillFor } from './arming.ts';

export type Attrs = Record<string, string | number | boolean | undefined | ((e: Event) => void)>;
export type Child = Node | string | null | false | undefined;

export function h(tag: string, attrs: Attrs = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  for (const c of children) if (c !== null && c !== false && c !== undefined) el.append(c);
  return el;
}

export const PERMISSIONS: Permission[] = ['off', 'ask', 'auto'];

/**
 * Invisible and direction-changing characters written as \uXXXX (\u{XXXXX} past U+FFFF): the
 * agent writes arguments and pages write titles, and with them they could make the panel show
 * text in another order than it is (code on an approval card, a site name in the activity list),
 * or carry text the user cannot see (variation selectors can spell out a whole hidden text after
 * one visible letter). Which characters: UNSHOWN, the same set the CLI and the logs escape.
 */
export const showHidden = (s: string) =>
  s.replace(UNSHOWN, (c) => {
    const cp = c.codePointAt(0)!;
    return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, '0')}`;
  });

/**
 * off/ask/auto; `mixed` shows a placeholder option when a group's tools differ.
 *
 * A change to auto (the tool runs without asking) counts only once the select has stayed in
 * place for ARM_MS (arming.ts), measured when the choice is made: what is
 * above it moves as the agent works, and a page's popup over the panel (a select's list) can go
 * away under the user's pointer, so a click aimed elsewhere opens this select's list, and the next
 * one picks from it. Such a change is taken back, and the select says why. Other changes always work.
 */
export function permissionSelect(value: Permission | 'mixed', onChange: (p: Permission) => void, attrs: Attrs): HTMLElement {
  const label = `Permission for ${attrs['data-tool'] ?? attrs['data-plugin'] ?? attrs['data-group'] ?? ''}`;
  const options = PERMISSIONS.map((p) => h('option', { value: p, selected: p === value }, p));
  if (value === 'mixed') options.unshift(h('option', { value: 'mixed', selected: true, disabled: true }, 'mixed'));
  const key = `select:${String(attrs['data-testid'] ?? label)}`;
  // data-arm-select: measured after every render (main.ts armToggles), as the guarded toggles are.
  const sel = h('select', { ...attrs, 'aria-label': label, 'data-arm-select': key }, ...options) as HTMLSelectElement;
  // Measured once drawn (the panel renders, then measures), so its wait starts where it is shown.
  queueMicrotask(() => {
    if (sel.isConnected) stillFor(key, sel);
  });
  sel.addEventListener('change', () => {
    const next = sel.value as Permission;
    const shown = sel.nextElementSibling?.classList.contains('arm-note') ? sel.nextElementSibling : null;
    if (next === 'auto' && value !== 'auto' && stillFor(key, sel) < ARM_MS) {
      sel.value = value;
      sel.title = 'This moved just now, or something over the panel just went away; choose again';
      // Said beside the select too: a tooltip alone shows only to a pointer resting on it.
      if (!shown) sel.after(h('span', { class: 'arm-note', role: 'status' }, 'moved just now: choose auto again'));
      return;
    }
    shown?.remove();
    onChange(next);
  });
  return sel;
}

/** "3 s", "1 m 05 s": elapsed and durations in the activity list. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  return `${Math.floor(s / 60)} m ${String(s % 60).padStart(2, '0')} s`;
}
