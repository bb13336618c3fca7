/** Tiny DOM helpers for the side panel (no framework: the panel re-renders from state). */
import type { Permission } from '../../server/protocol/methods.ts';
import { UNSHOWN } from '../../server/shown-text.ts';

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

/** off/ask/auto; `mixed` shows a placeholder option when a group's tools differ. */
export function permissionSelect(value: Permission | 'mixed', onChange: (p: Permission) => void, attrs: Attrs): HTMLElement {
  const label = `Permission for ${attrs['data-tool'] ?? attrs['data-plugin'] ?? attrs['data-group'] ?? ''}`;
  const options = PERMISSIONS.map((p) => h('option', { value: p, selected: p === value }, p));
  if (value === 'mixed') options.unshift(h('option', { value: 'mixed', selected: true, disabled: true }, 'mixed'));
  const sel = h('select', { ...attrs, 'aria-label': label }, ...options);
  sel.addEventListener('change', () => onChange((sel as HTMLSelectElement).value as Permission));
  return sel;
}

/** "3 s", "1 m 05 s": elapsed and durations in the activity list. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  return `${Math.floor(s / 60)} m ${String(s % 60).padStart(2, '0')} s`;
}
