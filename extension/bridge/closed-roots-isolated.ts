/**
 * The isolated half of closed-roots-main.ts (ISOLATED world, document_start, every frame): picks a
 * random event type, keeps it in this extension's isolated world, and tells the MAIN half once,
 * before any page script runs (the page cannot listen yet). dom.ts's pageOwnsClosedRoot asks with it.
 */
import { CLOSED_ROOTS_HELLO, CLOSED_ROOTS_TYPE_KEY } from '../page/closed-roots.ts';

(() => {
  const g = globalThis as unknown as Record<string, unknown>;
  if (g[CLOSED_ROOTS_TYPE_KEY]) return;
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  const type = 'x' + Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  g[CLOSED_ROOTS_TYPE_KEY] = type;
  window.dispatchEvent(new CustomEvent(CLOSED_ROOTS_HELLO, { detail: type }));
})();
