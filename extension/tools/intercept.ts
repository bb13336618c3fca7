/**
 * browser_intercept_requests: block, fail or answer (mock) a tab's requests by URL pattern, through
 * the DevTools Fetch domain, until `stop`. The tab holds a debugger session while rules are set
 * (like network capture); requests no rule matches go on untouched. Starts `ask`: a mocked answer
 * changes what the user's page shows.
 *
 * `fulfill` answers data requests only (FULFILLABLE). An answered document, script or worker would
 * be the agent's own code running in the site's origin — browser_execute_script without its `off`
 * — so those go on untouched and count as `skipped`.
 *
 * Only http(s) requests are acted on (intercept-scheme.ts): a pattern naming another scheme is
 * refused, and a paused chrome-extension://, file://, data: or blob: request goes on untouched.
 *
 * Rules hold for the site the tab showed when they were set (the one an approval card named): when
 * the tab leaves it, interception ends before the new site's document is requested. They also end
 * when the extension loses its connection to the server (endAllInterception), and when the MCP
 * session whose call set them ends (session-owned.ts; each call replaces the tab's rules, so the
 * rules are that one call's; rules set by a call of no session, REST, stay). Otherwise an
 * agent could set rules on a harmless page, then navigate the tab (auto) to the user's bank and
 * answer its API calls there.
 */
import { interceptPatternError, isHttpUrl } from '../../server/protocol/intercept-scheme.ts';
import { ToolError } from '../shared/tool-error.ts';
import { debuggerEvents } from './cdp-events.ts';
import type { CdpSend } from './debugger.ts';
import { holdDebugger } from './held-debugger.ts';
import { endedSession, Makers, onSessionEnded } from './session-owned.ts';
import type { Handlers } from './types.ts';
import { redactedUrl, siteOf } from './url-policy.ts';
import { wildcardMatch } from './wildcard.ts';

interface Rule {
  urlPattern: string;
  action: 'block' | 'fail' | 'fulfill';
  status?: number;
  body?: string;
  contentType?: string;
  hits: number;
  /** Requests a fulfill rule matched but may not answer (documents, scripts, workers). */
  skipped: number;
}

/** CDP resource types a fulfill rule may answer: data the page's own code reads, never code or a document. */
const FULFILLABLE: ReadonlySet<string> = new Set(['XHR', 'Fetch', 'EventSource', 'Image', 'Media', 'Font', 'Stylesheet', 'TextTrack', 'Manifest', 'Ping']);

interface Interception {
  send: CdpSend;
  rules: Rule[];
  /** siteOf the tab's page when the rules were set. */
  site: string;
  stop: () => void;
  /** The session of the call that set the rules (each call replaces them). */
  makers: Makers;
  /** The site a main-frame document request went to when the tab left `site` (the rules ended then). */
  leftFor?: string;
}
const active = new Map<number, Interception>();
/** Why a tab's interception ended by itself (it left the site), told once to the next call on it. */
const endedNotes = new Map<number, string>();

/** Every main-frame document request pauses too, so leaving the site is seen before the request goes out. */
const DOCUMENTS = { urlPattern: '*', resourceType: 'Document', requestStage: 'Request' } as const;

/** A Content-Type the rule may answer with: printable ASCII and tabs, as HTTP header values are. */
const HEADER_VALUE = /^[\t\x20-\x7e]{0,256}$/;

/** CDP URL patterns: `*` matches any run of characters, `?` one character. */
const globMatch = (url: string, pattern: string): boolean => wildcardMatch(url, pattern, { anyChar: true });

interface FrameTreeNode {
  frame: { id: string; url: string; securityOrigin?: string };
  childFrames?: FrameTreeNode[];
}

/**
 * The site (siteOf) of the document frame `frameId` of the tab shows now, or null when the frame is
 * gone: from its security origin; a sandboxed frame's is opaque ("null", never the site); an
 * about:srcdoc or about:blank frame has its parent's (DevTools reports its origin as "://").
 */
async function frameSite(send: CdpSend, frameId: string): Promise<string | null> {
  const tree = await send<{ frameTree: FrameTreeNode }>('Page.getFrameTree').catch(() => null);
  const siteIn = (n: FrameTreeNode, parentSite: string): string | null => {
    const f = n.frame;
    const own = f.securityOrigin === 'null' ? 'null' : f.url.startsWith('about:') ? parentSite : siteOf(f.securityOrigin || f.url);
    if (f.id === frameId) return own;
    for (const c of n.childFrames ?? []) {
      const found = siteIn(c, own);
      if (found !== null) return found;
    }
    return null;
  };
  return tree ? siteIn(tree.frameTree, 'null') : null;
}

async function start(tabId: number, rules: Rule[], site: string): Promise<Interception> {
  const session = await holdDebugger(tabId, () => i.stop());
  const send = session.send;
  const i: Interception = { send, rules, site, stop: () => {}, makers: new Makers() };
  const leave = (url: string) => {
    if (active.get(tabId) !== i) return;
    i.leftFor = siteOf(url);
    endedNotes.set(tabId, `Interception on tab ${tabId} ended when the tab left ${i.site} for ${siteOf(url)}; set the rules again to intercept there.`);
    void send('Fetch.disable').catch(() => {});
    i.stop();
  };
  let mainFrameId: string | undefined;
  try {
    mainFrameId = ((await send('Page.getFrameTree')) as { frameTree: { frame: { id: string } } }).frameTree.frame.id;
  } catch (err) {
    session.release();
    throw err;
  }
  const offEvents = debuggerEvents(tabId, (method, params) => {
    if (method !== 'Fetch.requestPaused') return;
    const p = params as { requestId: string; request: { url: string }; resourceType?: string; frameId?: string };
    if (p.resourceType === 'Document' && p.frameId === mainFrameId && siteOf(p.request.url) !== i.site) {
      leave(p.request.url);
      return void send('Fetch.continueRequest', { requestId: p.requestId }).catch(() => {});
    }
    // Only http(s) requests: never another extension's resources (chrome-extension://), a file://
    // file, or a data: or blob: URL, whatever pattern (`*`) matched them.
    const rule = isHttpUrl(p.request.url) ? i.rules.find((r) => globMatch(p.request.url, r.urlPattern)) : undefined;
    if (!rule) return void send('Fetch.continueRequest', { requestId: p.requestId }).catch(() => {});
    if (p.frameId && p.frameId !== mainFrameId && p.resourceType !== 'Document') {
      // A frame inside the page: its requests are the approved site's only if its document is of
      // that site (another origin of the same site, e.g. another port or subdomain, runs in the
      // page's process and so reaches this session; the user approved the tab's site only).
      void frameSite(send, p.frameId).then((site) => {
        if (site === i.site) act(p, rule);
        else void send('Fetch.continueRequest', { requestId: p.requestId }).catch(() => {});
      });
      return;
    }
    act(p, rule);
  });
  function act(p: { requestId: string; resourceType?: string }, rule: Rule): void {
    if (rule.action === 'fulfill' && !FULFILLABLE.has(p.resourceType ?? '')) {
      rule.skipped++;
      return void send('Fetch.continueRequest', { requestId: p.requestId }).catch(() => {});
    }
    rule.hits++;
    if (rule.action === 'fulfill') {
      const body = btoa(String.fromCharCode(...new TextEncoder().encode(rule.body ?? '')));
      void send('Fetch.fulfillRequest', {
        requestId: p.requestId,
        responseCode: rule.status ?? 200,
        responseHeaders: [{ name: 'content-type', value: rule.contentType ?? 'application/json' }],
        body,
        // Should Chrome refuse the answer, the request fails rather than wait for good.
      }).catch(() => send('Fetch.failRequest', { requestId: p.requestId, errorReason: 'Failed' }).catch(() => {}));
    } else {
      void send('Fetch.failRequest', { requestId: p.requestId, errorReason: rule.action === 'block' ? 'BlockedByClient' : 'Failed' }).catch(() => {});
    }
  }
  // A page restored from the back/forward cache makes no document request: its commit is the sign.
  const onUpdated = (id: number, info: { url?: string }) => {
    if (id === tabId && info.url !== undefined && siteOf(info.url) !== i.site) leave(info.url);
  };
  chrome.tabs.onUpdated.addListener(onUpdated);
  i.stop = () => {
    offEvents();
    chrome.tabs.onUpdated.removeListener(onUpdated);
    if (active.get(tabId) === i) active.delete(tabId);
    session.release();
  };
  active.set(tabId, i);
  return i;
}

/**
 * Ends every tab's interception (the extension lost its connection to the server): mocked and
 * blocked requests would otherwise go on changing what the user's own tab shows with no agent left
 * to stop them. The next call on the tab says so.
 */
export async function endAllInterception(why: string): Promise<void> {
  await Promise.all([...active].map(async ([tabId, i]) => {
    endedNotes.set(tabId, `Interception on tab ${tabId} ended when ${why}; set the rules again to intercept.`);
    await i.send('Fetch.disable').catch(() => {});
    i.stop();
  }));
}

/** MCP session `session` ended: the interception of each tab whose rules it set ends. */
async function sessionGone(tabId: number, session: string): Promise<void> {
  const i = active.get(tabId);
  if (!i || !i.makers.drop(session)) return;
  endedNotes.set(tabId, `Interception on tab ${tabId} ended when the MCP session that set its rules ended; set the rules again to intercept.`);
  await i.send('Fetch.disable').catch(() => {});
  i.stop();
}
onSessionEnded((session) => {
  for (const tabId of [...active.keys()]) void sessionGone(tabId, session).catch(() => {});
});

const summary = (rules: Rule[]) => rules.map(({ urlPattern, action, status, hits, skipped }) => ({ urlPattern, action, ...(action === 'fulfill' ? { status: status ?? 200 } : {}), hits, ...(skipped > 0 ? { skipped } : {}) }));

export const interceptTools = {
  async browser_intercept_requests(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const tabId = tab.id!;
    const current = active.get(tabId);
    const ended = endedNotes.get(tabId);
    endedNotes.delete(tabId);
    const endedNote = ended ? { note: ended } : {};
    if (input.stop === true) {
      if (!current) return { value: { tabId, intercepting: false, wasIntercepting: false, ...endedNote } };
      const rules = summary(current.rules);
      await current.send('Fetch.disable').catch(() => {});
      current.stop();
      return { value: { tabId, intercepting: false, wasIntercepting: true, rules } };
    }
    const given = input.rules ?? [];
    if (given.length === 0) return { value: { tabId, intercepting: !!current, rules: current ? summary(current.rules) : [], ...endedNote } };
    for (const [k, r] of given.entries()) {
      const scheme = interceptPatternError(r.urlPattern, k);
      if (scheme !== null) throw new ToolError(scheme, { code: 'invalid_arguments', category: 'validation' });
      if (r.action !== 'fulfill' && (r.status !== undefined || r.body !== undefined)) {
        throw new ToolError(`rules[${k}]: status and body are for action "fulfill", not "${r.action}"`, { code: 'invalid_arguments', category: 'validation' });
      }
      // Chrome refuses to answer with a header value holding a line break or another control
      // character, and the request would then wait for good.
      if (r.contentType !== undefined && !HEADER_VALUE.test(r.contentType)) {
        throw new ToolError(`rules[${k}].contentType ${JSON.stringify(r.contentType).slice(0, 80)} is not a header value: printable characters only (no line breaks), at most 256`, { code: 'invalid_arguments', category: 'validation' });
      }
    }
    const rules: Rule[] = given.map((r) => ({ ...r, hits: 0, skipped: 0 }));
    // The page this call was allowed on (ctx.tab checked it; an approved call, that it is the approved site).
    const site = siteOf(tab.url ?? tab.pendingUrl ?? '');
    const i = current ?? (await start(tabId, rules, site));
    i.rules = rules;
    i.site = site;
    // The rules are this call's now, whoever set the ones they replace.
    i.makers = new Makers();
    i.makers.add(ctx.session);
    try {
      await i.send('Fetch.enable', { patterns: [...rules.map((r) => ({ urlPattern: r.urlPattern, requestStage: 'Request' })), DOCUMENTS] });
    } catch (err) {
      i.stop();
      throw new ToolError(`Chrome refused the patterns: ${(err as Error).message}`, { code: 'invalid_arguments', category: 'validation' });
    }
    if (active.get(tabId) !== i && i.leftFor !== undefined) {
      // The tab left the approved site while the rules were being set: the page is not the one
      // this call was allowed for (as below, where the navigation is seen after the rules).
      await i.send('Fetch.disable').catch(() => {});
      throw new ToolError(`Tab ${tabId} went to ${redactedUrl(i.leftFor)} while this call ran, not ${redactedUrl(site)} where it was allowed; no rules were set. Call it again to ask again.`, { code: 'tab_mismatch', category: 'validation' });
    }
    if (active.get(tabId) !== i) {
      // Interception ended while the rules were being set (stop, its MCP session's end, the
      // server lost): requests must not pause with nothing left to answer them.
      await i.send('Fetch.disable').catch(() => {});
      throw new ToolError(`Interception on tab ${tabId} ended while this call ran (${endedNotes.get(tabId) ?? 'it was stopped, or the debugger left the tab'}); no rules were set. Try again`, { code: 'not_available', category: 'validation', retryable: true });
    }
    // Document requests pause from here on; a navigation that committed before (after the call's
    // check) is seen now: the page shown must be of the site the rules are for.
    const shown = await i.send<{ frameTree: { frame: { url: string } } }>('Page.getFrameTree').then((t) => t.frameTree.frame.url, () => null);
    if (shown !== null && siteOf(shown) !== site) {
      await i.send('Fetch.disable').catch(() => {});
      i.stop();
      throw new ToolError(`Tab ${tabId} shows ${redactedUrl(shown)} now, not ${redactedUrl(site)} where this call was allowed; no rules were set. Call it again to ask again.`, { code: 'tab_mismatch', category: 'validation' });
    }
    // The call's MCP session ended while it ran (session.ended came before these rules).
    if (endedSession(ctx.session)) await sessionGone(tabId, ctx.session);
    return { value: { tabId, intercepting: true, rules: summary(rules), note: `In effect on ${site} until browser_intercept_requests with stop: true, the tab leaves that site, ${ctx.session !== undefined ? 'it closes, or this MCP session ends' : 'or it closes'}.` } };
  },
} satisfies Partial<Handlers>;
