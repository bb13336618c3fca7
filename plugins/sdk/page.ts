/**
 * Page helpers for adapters (run in the page's MAIN world): read the app's own state —
 * globals, cookies, storage, meta tags — and wait for the app to get somewhere.
 */
import { ToolError } from './errors.ts';

export interface WaitOptions {
  /** Default 10 s; on expiry a ToolError with category "timeout". */
  timeoutMs?: number;
  /** Poll interval for waitUntil (default 100 ms). */
  intervalMs?: number;
  signal?: AbortSignal;
}

export const DEFAULT_WAIT_TIMEOUT_MS = 10_000;

function cancelled(signal?: AbortSignal): ToolError {
  const reason = signal?.reason instanceof Error ? signal.reason.message : String(signal?.reason ?? 'cancelled');
  return new ToolError(`Cancelled: ${reason}`, { code: 'cancelled', category: 'internal', retryable: false });
}

/** Resolve with the first truthy value `check` returns; poll until timeout or abort. */
export function waitUntil<T>(check: () => T | Promise<T>, options: WaitOptions = {}): Promise<NonNullable<T>> {
  const { timeoutMs = DEFAULT_WAIT_TIMEOUT_MS, intervalMs = 100, signal } = options;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(cancelled(signal));
    let done = false;
    let poll: ReturnType<typeof setTimeout> | undefined;
    const finish = (fn: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(poll);
      signal?.removeEventListener('abort', onAbort);
      fn();
    };
    const timer = setTimeout(() => finish(() => reject(ToolError.timeout(`Condition not met within ${timeoutMs} ms`))), timeoutMs);
    const onAbort = () => finish(() => reject(cancelled(signal)));
    signal?.addEventListener('abort', onAbort, { once: true });
    const tick = async () => {
      try {
        const v = await check();
        if (v) return finish(() => resolve(v as NonNullable<T>));
      } catch (err) {
        return finish(() => reject(err));
      }
      if (!done) poll = setTimeout(tick, intervalMs);
    };
    void tick();
  });
}

/** Resolve with the first element matching `selector` (MutationObserver, no polling). */
export function waitForSelector<E extends Element = Element>(selector: string, options: WaitOptions = {}): Promise<E> {
  const { timeoutMs = DEFAULT_WAIT_TIMEOUT_MS, signal } = options;
  return new Promise((resolve, reject) => {
    const found = document.querySelector<E>(selector);
    if (found) return resolve(found);
    if (signal?.aborted) return reject(cancelled(signal));
    const finish = (fn: () => void) => {
      observer.disconnect();
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      fn();
    };
    const observer = new MutationObserver(() => {
      const el = document.querySelector<E>(selector);
      if (el) finish(() => resolve(el));
    });
    observer.observe(document.documentElement, { childList: true, subtree: true, attributes: true });
    const timer = setTimeout(() => finish(() => reject(ToolError.timeout(`No element matches ${selector} after ${timeoutMs} ms`))), timeoutMs);
    const onAbort = () => finish(() => reject(cancelled(signal)));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Read a dotted path from the page's globals: getPageGlobal('app.session.user.id'). */
export function getPageGlobal<T = unknown>(path: string): T | undefined {
  let cur: unknown = globalThis;
  for (const key of path.split('.')) {
    if (key === '') continue;
    if (cur === null || cur === undefined) return undefined;
    try {
      cur = (cur as Record<string, unknown>)[key];
    } catch {
      return undefined;
    }
  }
  return cur as T | undefined;
}

/** A cookie visible to the page (not HttpOnly ones: fetch sends those anyway). */
export function getCookie(name: string): string | undefined {
  for (const part of document.cookie.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) {
      const raw = part.slice(eq + 1).trim();
      try {
        return decodeURIComponent(raw);
      } catch {
        return raw;
      }
    }
  }
  return undefined;
}

function storageGet(kind: 'localStorage' | 'sessionStorage', key: string): string | undefined {
  try {
    return globalThis[kind].getItem(key) ?? undefined;
  } catch {
    return undefined; // storage disabled (e.g. sandboxed frame)
  }
}

export function getLocalStorage(key: string): string | undefined {
  return storageGet('localStorage', key);
}

export function getSessionStorage(key: string): string | undefined {
  return storageGet('sessionStorage', key);
}

/** Parsed JSON from local storage, undefined when missing or not JSON. */
export function getLocalStorageJson<T = unknown>(key: string): T | undefined {
  const raw = getLocalStorage(key);
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw) as T;
  } catch {
    return undefined;
  }
}

/** `<meta name="…" content="…">` (or property="…"), e.g. a CSRF token. */
export function getMetaContent(name: string): string | undefined {
  const el = [...document.querySelectorAll('meta')].find((m) => m.getAttribute('name') === name || m.getAttribute('property') === name);
  return el?.getAttribute('content') ?? undefined;
}
