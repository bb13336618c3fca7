/**
 * Storage and cookies, plus running a script in a page. Reading secrets and running code are the
 * dangerous end of the catalog: these start `off` or `ask` (server/tools/browser-catalog.ts).
 */
import { ToolError } from '../shared/tool-error.ts';
import { checkedDocument, withDebugger, type CdpSend } from './debugger.ts';
import { runPage, STALE_MS } from './page-run.ts';
import type { Handlers } from './types.ts';
import { assertApprovedSite, checkedScriptTarget, refusalReason, tabRefusedError } from './url-policy.ts';
import { guardedAttempt, scriptAttempts, SCRIPT_LATE, SCRIPT_MOVED } from './script-eval.ts';
import { checkLoadedFiles, closeLocalLoadsOf, mayLoadFiles } from './capture-resources.ts';

function checkUrl(url: unknown): string {
  try {
    const u = new URL(String(url));
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
    return u.href;
  } catch {
    throw new ToolError(`Invalid url "${url}": expected an http(s) URL such as https://example.com`, { code: 'invalid_arguments', category: 'validation' });
  }
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

type Evaluated = { result: { value?: unknown; type: string }; exceptionDetails?: { text: string; exception?: { description?: string; className?: string } } };

/**
 * browser_execute_script the careful way (when the quick way could not tell): everything runs on
 * the document DevTools described (checkedDocument: its own URL, for an approved call of the
 * approved site), so a navigation since makes the call fail instead of running the code on the
 * new page. Each form is compiled first without running; the code then runs once, unless the call
 * was given up while a busy page held the compile step. `this` is the window, as for code
 * evaluated at the top level.
 */
async function carefully(send: CdpSend, tabId: number, attempts: string[], signal: AbortSignal): Promise<Evaluated> {
  const objectGroup = 'opentabs-execute-script';
  const objectId = await checkedDocument(send, tabId, objectGroup);
  const inDocument = (expression: string, run: boolean) =>
    send<Evaluated>('Runtime.callFunctionOn', {
      objectId,
      functionDeclaration: `function () { return (function () { return ${expression}; }).call(window); }`,
      ...(run ? { awaitPromise: true, returnByValue: true, userGesture: true } : {}),
    });
  try {
    let expression = attempts[attempts.length - 1]!;
    for (const candidate of attempts) {
      // Evaluating the wrapper without calling it only parses the code (nothing runs).
      const compiled = await inDocument(candidate.slice(0, -2), false);
      if (!compiled.exceptionDetails) {
        expression = candidate;
        break;
      }
    }
    signal.throwIfAborted();
    return await inDocument(expression, true);
  } finally {
    void send('Runtime.releaseObjectGroup', { objectGroup }).catch(() => {});
  }
}

export const storageTools = {
  async browser_execute_script(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const tabId = tab.id!;
    // A file:// document can load other local files as scripts and style sheets, which put what
    // the file holds into the page (a hidden .env of KEY="value" lines sets globals): no code runs
    // in a document that loaded one of a file the tools may not use, the document loads no more
    // local scripts or style sheets once the agent's code runs in it (closeLocalLoadsOf: the code
    // could have it load one later, for other tools to read), and the result is dropped when one
    // was loaded while the code ran. Pictures, media and fonts are not looked at: a page's scripts
    // cannot read what they hold.
    const files = await mayLoadFiles(tabId);
    const unread = new Set(['Image', 'Media', 'Font']);
    // Through CDP so a strict page CSP (no eval) does not stop it; the result comes back by value.
    const r = await withDebugger(tabId, async (send) => {
      if (files) {
        await checkLoadedFiles(tabId, 'script', send, 'no script is run in it', unread);
        await closeLocalLoadsOf(tabId, (await checkedScriptTarget(tabId)).documentIds?.[0]);
      }
      const done = await evaluate(send);
      if (files) await checkLoadedFiles(tabId, 'script', send, 'it was loaded while the script ran, and the result is not returned', unread);
      return done;
    });
    async function evaluate(send: CdpSend): Promise<Evaluated> {
      const attempts = scriptAttempts(String(input.code));
      // The quick way, one DevTools round trip per attempt: the tab's top document as Chrome knows
      // it is checked here (URL policy; for an approved call, the approved site), and the code runs
      // only if the page evaluating it is still that document (guardedAttempt).
      const frame = await chrome.webNavigation.getFrame({ tabId, frameId: 0 }).catch(() => null);
      if (frame?.url) {
        const why = refusalReason(frame.url);
        if (why) throw tabRefusedError(tabId, why);
        assertApprovedSite(tabId, frame.url);
        // Started later than STALE_MS after sending, the page was busy (the caller may have given up).
        const notAfter = Date.now() + STALE_MS;
        for (const attempt of attempts) {
          const done = await send<Evaluated>('Runtime.evaluate', { expression: guardedAttempt(attempt, frame.url, notAfter), awaitPromise: true, returnByValue: true, userGesture: true });
          const value = done.result.value;
          // The document changed (a navigation, or only its URL: history.pushState) or the page
          // ran it late: the careful way below decides.
          if (value === SCRIPT_MOVED || value === SCRIPT_LATE) break;
          // Exceptions inside the code come back as {threw}: this one means the form did not compile.
          if (!done.exceptionDetails) return done;
        }
      }
      return carefully(send, tabId, attempts, ctx.signal);
    }
    if (r.exceptionDetails) {
      throw new ToolError(`The script threw: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`, { code: 'tool_error', category: 'validation' });
    }
    const answer = r.result.value as { type: string; value: unknown } | { threw: string } | undefined;
    if (answer && 'threw' in answer) throw new ToolError(`The script threw: ${answer.threw}`, { code: 'tool_error', category: 'validation' });
    return { value: answer ?? { type: 'null', value: null } };
  },

  async browser_get_storage(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const res = await runPage(await checkedScriptTarget(tab.id!), 'readStorage', [(input.storageType as 'local' | 'session') ?? 'local', input.key ?? null]);
    if (!res) throw new ToolError('This tab cannot be scripted', { code: 'not_available', category: 'validation' });
    return { value: res };
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
