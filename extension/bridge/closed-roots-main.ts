/**
 * Which shadow roots the page's own code attached (MAIN world, document_start, every frame; see
 * closed-roots-isolated.ts for the other half). Other extensions draw their UI in the page under
 * a custom element with a closed shadow root (a password manager's accounts and one-time codes);
 * whether the page defined that element's name says nothing, since the page can define any name,
 * before or after the extension makes its element. Who attached the root does: content scripts
 * call their own world's attachShadow, never the page's, and a root is never replaced.
 *
 * The page's Element.prototype.attachShadow is wrapped (it reads as the browser's own); each host
 * it gives a root gets a listener for an event type only this script and the isolated half know,
 * agreed before any page script runs. The isolated half dispatches that event on a host: the
 * listener cancels it, and the page cannot, as it cannot listen for a type it does not know. A
 * root the page attached some other way (another frame's attachShadow, a declarative template)
 * is not told, and counts as not the page's: its content is left closed, as for another
 * extension's.
 */
import { CLOSED_ROOTS_HELLO } from '../page/closed-roots.ts';

(() => {
  // Captured before any page script can replace them.
  const apply = Reflect.apply;
  const fnToString = Function.prototype.toString;
  const define = Object.defineProperty;
  const addListener = EventTarget.prototype.addEventListener;
  const removeListener = EventTarget.prototype.removeEventListener;
  const preventDefault = Event.prototype.preventDefault;
  const eventPhase = Object.getOwnPropertyDescriptor(Event.prototype, 'eventPhase')!.get!;
  const detailOf = Object.getOwnPropertyDescriptor(CustomEvent.prototype, 'detail')!.get!;
  const attach = Element.prototype.attachShadow;
  if (typeof attach !== 'function') return;

  /** The agreed event type; '' until the isolated half told it. */
  let type = '';
  const hello = (e: Event) => {
    const t = apply(detailOf, e, []) as unknown;
    // The first one only: a page script could send one later, but never before ours.
    if (type || typeof t !== 'string' || t.length < 16) return;
    type = t;
    apply(removeListener, window, [CLOSED_ROOTS_HELLO, hello, true]);
  };
  apply(addListener, window, [CLOSED_ROOTS_HELLO, hello, true]);

  function answer(e: Event): void {
    // Only for this host itself (AT_TARGET), not an element inside it.
    if (apply(eventPhase, e, []) === 2) apply(preventDefault, e, []);
  }

  // A Proxy of the browser's own function: the same name and length, no `prototype`, not a
  // constructor, called with the page's `this`; another frame's toString sees "[native code]" too.
  const wrapped = new Proxy(attach, {
    apply(target, self, args) {
      const root = apply(target, self, args);
      // It succeeded, so `self` is an element whose root this call made (or an empty declarative one it returned).
      if (type) apply(addListener, self, [type, answer]);
      return root;
    },
  });

  // Read as the browser's own function: Function.prototype.toString gives its text.
  const nativeText = new WeakMap<object, string>([[wrapped, apply(fnToString, attach, []) as string]]);
  const toString = new Proxy(fnToString, {
    apply(target, self, args) {
      const text = nativeText.get(self as object);
      return text !== undefined ? text : apply(target, self, args);
    },
  });
  nativeText.set(toString, apply(fnToString, fnToString, []) as string);
  const desc = Object.getOwnPropertyDescriptor(Element.prototype, 'attachShadow')!;
  define(Element.prototype, 'attachShadow', { ...desc, value: wrapped });
  const tsDesc = Object.getOwnPropertyDescriptor(Function.prototype, 'toString')!;
  define(Function.prototype, 'toString', { ...tsDesc, value: toString });
})();
