/**
 * A panel section the user is operating is not rebuilt under them. The panel re-renders on every
 * state push, and while an agent works those come many times a second. Rebuilding a section
 * replaces its elements, which between the press and the release of a button swallows the click
 * (they land on different elements), closes a select's open list, and drops text typed into a
 * settings form. So a section is held — left as it is while the rest of the panel stays live —
 * while a pointer is down in it, while one of its selects has focus (until a choice is made or
 * focus leaves), and while a text field in it has focus (until focus leaves the field's form);
 * then the panel renders again.
 */

/** Where the pointer went down, until it is released. */
let pressed: Element | null = null;
document.addEventListener('pointerdown', (e) => (pressed = e.target instanceof Element ? e.target : null), true);
document.addEventListener('pointerup', () => (pressed = null), true);
document.addEventListener('pointercancel', () => (pressed = null), true);

const TEXT_TYPES = new Set(['text', 'search', 'url', 'email', 'number', 'password', 'tel']);
const held = new Set<HTMLElement>();

/**
 * True when `section` must not be rebuilt now; `rerender` then runs once the user is done with it
 * (after the event that ends the use, so a click completes and a form submits first).
 */
export function heldForUser(section: HTMLElement, rerender: () => void): boolean {
  if (held.has(section)) return true;
  const wait = useOf(section);
  if (!wait) return false;
  held.add(section);
  wait(() => {
    held.delete(section);
    setTimeout(rerender, 0);
  });
  return true;
}

/** Done at the pointer's release or cancel (listeners run in order: `pressed` is cleared first). */
function afterRelease(done: () => void): void {
  const end = () => {
    document.removeEventListener('pointerup', end, true);
    document.removeEventListener('pointercancel', end, true);
    done();
  };
  document.addEventListener('pointerup', end, true);
  document.addEventListener('pointercancel', end, true);
}

/** How to wait for the end of what the user is doing in `section`, or null when nothing is. */
function useOf(section: HTMLElement): ((done: () => void) => void) | null {
  if (pressed && section.contains(pressed)) return afterRelease;
  const a = document.activeElement;
  if (!(a instanceof HTMLElement) || !section.contains(a)) return null;
  if (a instanceof HTMLSelectElement) {
    return (done) => {
      const end = () => {
        a.removeEventListener('change', end);
        a.removeEventListener('blur', end);
        done();
      };
      a.addEventListener('change', end);
      a.addEventListener('blur', end);
    };
  }
  if (a instanceof HTMLTextAreaElement || (a instanceof HTMLInputElement && TEXT_TYPES.has(a.type))) {
    // Moving from a field to the form's Save button is still the same use.
    const scope: HTMLElement = a.closest('form') ?? a;
    return (done) => {
      const onOut = (e: FocusEvent) => {
        if (e.relatedTarget instanceof Node && scope.contains(e.relatedTarget)) return;
        scope.removeEventListener('focusout', onOut);
        if (pressed) afterRelease(done);
        else done();
      };
      scope.addEventListener('focusout', onOut);
    };
  }
  return null;
}
