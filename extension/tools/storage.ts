/**
 * Storage and cookies, plus running a script in a page. Reading secrets and running code are the
 * dangerous end of the catalog: these start `off` or `ask` (server/tools/browser-catalog.ts).
 */
import { ToolError } from '../shared/tool-error.ts';
import { checkedDocument, withDebugger } from './debugger.ts';
import type { Handlers } from './types.ts';
import { checkedScriptTarget } from './url-policy.ts';
import { scriptAttempts } from './script-eval.ts';

function checkUrl(url: unknown): string {
  try {
    const u = new URL(String(url));
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
    return u.href;
  } catch {
    throw new ToolError(`Invalid url "${url}": expected an http(s) URL such as https://example.com`, { code: 'invalid_arguments', category: 'validation' });
  }
}

function readStorage(kind: 'local' | 'session', key: string | null) {
  const store = kind === 'local' ? localStorage : sessionStorage;
  if (key !== null) return { key, value: store.getItem(key) };
  const entries: Record<string, string> = {};
  for (let i = 0; i < store.length; i++) {
    const k = store.key(i)!;
    entries[k] = store.getItem(k) ?? '';
  }
  return { count: store.length, entries };
}

const cookieSummary = (c: chrome.cookies.Cookie) => ({
  name: c.name,
  value: c.value,
  domain: c.domain,
  path: c.path,
  secure: c.secure,
  httpOnly: c.httpOnly,
  sameSite: c.sameSite,
  session: c.session,
  expirationDate: c.expirationDate ?? null,
});

export const storageTools = {
  async browser_execute_script(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    type Evaluated = { result: { value?: unknown; type: string }; exceptionDetails?: { text: string; exception?: { description?: string; className?: string } } };
    // Through CDP so a strict page CSP (no eval) does not stop it; the result comes back by value.
    // Everything runs in the document checked first (for an approved call, one of the approved
    // site; checkedDocument): a navigation since then makes the call fail instead of running the
    // code on the new page. `this` is the window, as for code evaluated at the top level.
    const r = await withDebugger(tab.id!, async (send) => {
      const objectGroup = 'opentabs-execute-script';
      const objectId = await checkedDocument(send, tab.id!, objectGroup);
      const inDocument = (expression: string, run: boolean) =>
        send<Evaluated>('Runtime.callFunctionOn', {
          objectId,
          functionDeclaration: `function () { return (function () { return ${expression}; }).call(window); }`,
          ...(run ? { awaitPromise: true, returnByValue: true, userGesture: true } : {}),
        });
      try {
        const attempts = scriptAttempts(String(input.code));
        // The first form that compiles runs (once): an expression or function, else a function body.
        let expression = attempts[attempts.length - 1]!;
        for (const candidate of attempts) {
          // Evaluating the wrapper without calling it only parses the code (nothing runs).
          const compiled = await inDocument(candidate.slice(0, -2), false);
          if (!compiled.exceptionDetails) {
            expression = candidate;
            break;
          }
        }
        // A busy page can hold the compile step up past the call's timeout: then the caller was told
        // it failed, and the script must not run later.
        ctx.signal.throwIfAborted();
        return await inDocument(expression, true);
      } finally {
        void send('Runtime.releaseObjectGroup', { objectGroup }).catch(() => {});
      }
    });
    if (r.exceptionDetails) {
      throw new ToolError(`The script threw: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`, { code: 'tool_error', category: 'validation' });
    }
    return { value: (r.result.value as { type: string; value: unknown } | undefined) ?? { type: 'null', value: null } };
  },

  async browser_get_storage(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const [res] = await chrome.scripting.executeScript({ target: await checkedScriptTarget(tab.id!), func: readStorage, args: [(input.storageType as 'local' | 'session') ?? 'local', input.key ?? null] });
    if (!res) throw new ToolError('This tab cannot be scripted', { code: 'not_available', category: 'validation' });
    return { value: res.result };
  },

  async browser_get_cookies(input) {
    const url = checkUrl(input.url);
    const cookies = await chrome.cookies.getAll({ url, ...(input.name !== undefined ? { name: String(input.name) } : {}) });
    return { value: { url, cookies: cookies.map(cookieSummary) } };
  },

  async browser_set_cookie(input) {
    const url = checkUrl(input.url);
    let c: chrome.cookies.Cookie | null;
    try {
      c = await chrome.cookies.set({
        url,
        name: String(input.name),
        value: String(input.value ?? ''),
        domain: input.domain,
        path: input.path,
        secure: input.secure,
        httpOnly: input.httpOnly,
        sameSite: input.sameSite,
        expirationDate: input.expirationDate,
      });
    } catch (err) {
      throw new ToolError(`Chrome refused the cookie: ${(err as Error).message}`, { code: 'invalid_arguments', category: 'validation' });
    }
    if (!c) throw new ToolError('Chrome refused the cookie (check domain, secure and sameSite)', { code: 'invalid_arguments', category: 'validation' });
    return { value: cookieSummary(c) };
  },

  async browser_delete_cookies(input) {
    const url = checkUrl(input.url);
    const name = String(input.name);
    const removed = await chrome.cookies.remove({ url, name });
    return { value: { url, name, removed: removed !== null } };
  },
} satisfies Partial<Handlers>;
