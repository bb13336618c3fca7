/**
 * browser_execute_script's code, made usable whatever form the model writes it in: an expression
 * (`document.title`), a function (`() => document.title`, called), or a function body with
 * `return` (`const n = 1; return n + 1`). Promises are awaited. The result is made JSON-safe in the
 * page: DOM elements become {tag, id, classes, text, selector} — the selector works with the other
 * tools —, node lists become arrays of those, functions a short mark, cycles and very deep values
 * are cut with a mark.
 */

/** The value serializer, run in the page (its source is embedded in the evaluated expression). */
function toJsonSafe(value: unknown): unknown {
  const MAX_DEPTH = 12;
  const MAX_ITEMS = 500;
  const seen = new WeakSet<object>();
  const cssPath = (el: Element): string => {
    if (el.id && document.querySelectorAll(`#${CSS.escape(el.id)}`).length === 1) return `#${CSS.escape(el.id)}`;
    const parts: string[] = [];
    let node: Element | null = el;
    while (node && node.nodeType === 1 && parts.length < 12) {
      if (node.id && document.querySelectorAll(`#${CSS.escape(node.id)}`).length === 1) {
        parts.unshift(`#${CSS.escape(node.id)}`);
        break;
      }
      const parent: Element | null = node.parentElement;
      const tag = node.tagName.toLowerCase();
      const same = parent ? Array.from(parent.children).filter((c) => c.tagName === node!.tagName) : [];
      parts.unshift(same.length > 1 ? `${tag}:nth-of-type(${same.indexOf(node) + 1})` : tag);
      node = parent;
    }
    return parts.join(' > ');
  };
  const element = (el: Element) => ({
    element: el.tagName.toLowerCase(),
    ...(el.id ? { id: el.id } : {}),
    ...(el.classList.length ? { classes: Array.from(el.classList).slice(0, 10) } : {}),
    text: ((el as HTMLElement).innerText ?? el.textContent ?? '').trim().slice(0, 200),
    selector: cssPath(el),
  });
  const walk = (v: unknown, depth: number): unknown => {
    if (v === undefined) return null;
    if (typeof v === 'function') return `[function ${(v as { name?: string }).name || 'anonymous'}]`;
    if (typeof v === 'bigint') return `${v}n`;
    if (typeof v === 'symbol') return v.toString();
    if (typeof v !== 'object' || v === null) return typeof v === 'number' && !Number.isFinite(v) ? String(v) : v;
    if (typeof Element !== 'undefined' && v instanceof Element) return element(v);
    if (typeof Node !== 'undefined' && v instanceof Node) return { node: v.nodeName, text: (v.textContent ?? '').trim().slice(0, 200) };
    if (seen.has(v)) return '[circular]';
    if (depth >= MAX_DEPTH) return '[too deep]';
    seen.add(v);
    if (typeof NodeList !== 'undefined' && (v instanceof NodeList || v instanceof HTMLCollection)) return Array.from(v as ArrayLike<unknown>).slice(0, MAX_ITEMS).map((x) => walk(x, depth + 1));
    if (Array.isArray(v)) return v.slice(0, MAX_ITEMS).map((x) => walk(x, depth + 1));
    if (v instanceof Map) return Object.fromEntries(Array.from(v.entries()).slice(0, MAX_ITEMS).map(([k, x]) => [String(k), walk(x, depth + 1)]));
    if (v instanceof Set) return Array.from(v).slice(0, MAX_ITEMS).map((x) => walk(x, depth + 1));
    if (v instanceof Date) return v.toISOString();
    if (v instanceof Error) return { error: v.name, message: v.message };
    const out: Record<string, unknown> = {};
    let n = 0;
    for (const key of Object.keys(v)) {
      if (n++ >= MAX_ITEMS) break;
      out[key] = walk((v as Record<string, unknown>)[key], depth + 1);
    }
    return out;
  };
  return walk(value, 0);
}

/**
 * The expressions to try, in order: the code as an expression (a function value is called), then
 * as a function body. The second is used only when the first is not valid syntax. Each ends with
 * the call `()`: without it, evaluating one only parses the code. An exception the code throws is
 * caught inside and answered as `{ threw }`, so an exception DevTools reports for one of these
 * can only mean its source did not compile (nothing of it ran).
 */
export function scriptAttempts(code: string): string[] {
  const safe = `(${toJsonSafe.toString()})`;
  // {type, value}: type is what the code produced (string, number, object, array, element, null …).
  const wrap = (v: string) =>
    `{ try { const __r = ${v}; return { type: __r === null || __r === undefined ? 'null' : Array.isArray(__r) ? 'array' : typeof Element !== 'undefined' && __r instanceof Element ? 'element' : typeof __r, value: ${safe}(__r) }; } catch (__e) { return { threw: __e instanceof Error ? String(__e.stack || __e) : 'Uncaught ' + String(__e) }; } }`;
  return [
    `(async () => { ${wrap(`await (async () => { const __v = (\n${code}\n); return typeof __v === 'function' ? await __v() : await __v; })()`)} })()`,
    `(async () => { ${wrap(`await (async () => {\n${code}\n})()`)} })()`,
  ];
}

/** What a guarded attempt answers instead of running: the tab shows another document than the one checked, or the page ran it late. */
export const SCRIPT_MOVED = 'opentabs:document-changed';
export const SCRIPT_LATE = 'opentabs:ran-late';

/**
 * One attempt that checks, in the same task and before any of the code runs, that it is in the
 * document checked beforehand: `location.href` is the checked URL (`location` and its `href` are
 * unforgeable — a page cannot redefine them), and the page ran it by `notAfter` (a busy page holds
 * an evaluation up; the caller may have given up meanwhile). Otherwise it answers SCRIPT_MOVED or
 * SCRIPT_LATE and runs nothing. The check is the script's first statement, complete before the
 * code's text starts, so nothing the code holds can run ahead of it. (A page that replaces
 * Date.now can only make its own document run the code late.)
 */
export function guardedAttempt(attempt: string, url: string, notAfter: number): string {
  return `if (location.href !== ${JSON.stringify(url)}) ${JSON.stringify(SCRIPT_MOVED)};\nelse if (Date.now() > ${notAfter}) ${JSON.stringify(SCRIPT_LATE)};\nelse ${attempt}`;
}
