/**
 * `ask` permission: the server sends confirmation.request to the extension (side panel) and waits
 * for confirmation.response, at most ctx.limits.confirmationTimeoutMs (a second more when the
 * server was stopped past it: an answer that arrived meanwhile is read first). Pending confirmations
 * survive an extension reconnect (they are re-sent to the new connection), since the side panel
 * often reconnects while the user is deciding.
 *
 * At most MAX_PENDING_APPROVALS_PER_CALLER approvals wait per caller and MAX_PENDING_APPROVALS in
 * all; one more is refused at once with `too_many_pending_approvals` (it never reaches the panel).
 * The user's own calls (REST with the secret) count only against their own cap: clients that fill
 * every slot do not stop the user asking. A page's request for the user's input (an interaction
 * card) counts against its origin's cap and MAX_PENDING_INTERACTIONS, never the cap on all calls.
 */
import type { CoreDeps } from '../deps.ts';
import { OpenTabsError } from '../errors.ts';
import { MAX_PENDING_APPROVALS, MAX_PENDING_APPROVALS_PER_CALLER, MAX_PENDING_INTERACTIONS } from '../limits.ts';
import { lateTolerantTimeout } from '../protocol/late-timer.ts';
import type { ConfirmationTarget, PendingConfirmation } from '../protocol/methods.ts';
import { fail } from '../tools/call-errors.ts';
import type { HubView } from './types.ts';

export interface ConfirmationRequest {
  tool: string;
  plugin: string;
  params: unknown;
  signal?: AbortSignal;
  /** Who asks (MCP session id, or the transport for callers without one): the per-caller cap. */
  caller?: string;
  /** The user's own call (REST with the secret): not counted in, nor held back by, the cap on all callers. */
  byUser?: boolean;
  /** What the call touches, as far as the server knows (shown first on the approval card). */
  target?: ConfirmationTarget;
  /** Shown on the card, and its Always allow asks once more (a plugin or page tool marked destructive). */
  risk?: string;
  /** Why the tool is asked about again (a page tool new or changed since Always allow), shown on the card. */
  note?: string;
  /** A page tool asking for the user's input while it runs, not a call to approve (PendingConfirmation.interaction). */
  interaction?: true;
  /** Called once the approval is waiting (the caller tells its client it waits, and how to answer). */
  onPending?: (p: { id: string; expiresAt: number; timeoutMs: number }) => void;
}

export interface ConfirmationDecision {
  decision: 'allow' | 'deny';
  alwaysAllow?: boolean;
}

/** A waiting approval: what the side panel is shown, plus who asked and how to answer them. */
interface Pending extends PendingConfirmation {
  caller: string;
  byUser: boolean;
  /** performance.now() when the wait ends (remainingMs is counted from it, not from the wall clock). */
  deadline: number;
  settle(d: ConfirmationDecision | Error): void;
}

/**
 * One more waiting card refused: an agent's call over its client's cap (`caller`) or the cap on
 * all calls (`all`); a page's request for the user's input over its origin's cap (`origin`) or the
 * pages' budget (`interactions`).
 */
export function tooManyPendingApprovals(tool: string, cap: number, scope: 'caller' | 'all' | 'origin' | 'interactions'): OpenTabsError {
  if (scope === 'origin' || scope === 'interactions') {
    const who = scope === 'origin' ? "this page's origin" : 'pages';
    return new OpenTabsError(
      'too_many_pending_approvals',
      `The user was not asked: ${cap} requests of ${who} for the user's input already wait in the OpenTabs side panel (limit ${cap}). Ask the user to answer them there, then retry ${tool}.`,
      { category: 'rate_limited', retryable: true },
    );
  }
  const who = scope === 'caller' ? `this client already has ${cap} calls` : `${cap} calls already are`;
  return new OpenTabsError(
    'too_many_pending_approvals',
    `${tool} was not sent for approval: ${who} waiting for approval in the OpenTabs side panel (limit ${cap}). ` +
      'Ask the user to answer them in the side panel (Allow or Deny), then retry.',
    { category: 'rate_limited', retryable: true },
  );
}

/** What the side panel is shown of a waiting approval, with the time it still waits as of now. */
function shown(p: Pending): PendingConfirmation {
  const { id, tool, plugin, params, expiresAt, target, risk, note, interaction } = p;
  const remainingMs = Math.max(0, Math.round(p.deadline - performance.now()));
  return { id, tool, plugin, params, expiresAt, ...(target ? { target } : {}), remainingMs, ...(risk ? { risk } : {}), ...(note ? { note } : {}), ...(interaction ? { interaction } : {}) };
}

export class Confirmations {
  private pending = new Map<string, Pending>();

  constructor(
    private readonly ctx: Pick<CoreDeps, 'limits'>,
    private readonly hub: HubView,
  ) {}

  ask(req: ConfirmationRequest): Promise<ConfirmationDecision> {
    if (!this.hub.connected) return Promise.reject(fail.notConnected());
    if (req.signal?.aborted) return Promise.reject(fail.cancelled(req.tool, 'the client cancelled the request'));
    const caller = req.caller ?? 'unknown';
    let mine = 0;
    let ofClients = 0;
    let interactions = 0;
    for (const p of this.pending.values()) {
      if (p.caller === caller) mine++;
      if (p.interaction) interactions++;
      else if (!p.byUser) ofClients++;
    }
    if (mine >= MAX_PENDING_APPROVALS_PER_CALLER) return Promise.reject(tooManyPendingApprovals(req.tool, MAX_PENDING_APPROVALS_PER_CALLER, req.interaction ? 'origin' : 'caller'));
    if (req.interaction) {
      if (interactions >= MAX_PENDING_INTERACTIONS) return Promise.reject(tooManyPendingApprovals(req.tool, MAX_PENDING_INTERACTIONS, 'interactions'));
    } else if (req.byUser !== true && ofClients >= MAX_PENDING_APPROVALS) return Promise.reject(tooManyPendingApprovals(req.tool, MAX_PENDING_APPROVALS, 'all'));
    const timeoutMs = this.ctx.limits.confirmationTimeoutMs;
    const id = crypto.randomUUID();
    const expiresAt = Date.now() + timeoutMs;
    const deadline = performance.now() + timeoutMs;
    return new Promise<ConfirmationDecision>((resolve, reject) => {
      const onAbort = () => {
        this.hub.notify('confirmation.resolved', { id, outcome: 'cancelled' });
        entry.settle(fail.cancelled(req.tool, 'the client cancelled the request while it waited for approval'));
      };
      // The wait ends at its time; once the server was stopped past it (the computer slept,
      // SIGSTOP), only after what arrived meanwhile is read: the user's answer may be in the socket,
      // or on its way from the card the user is answering just as the server runs again.
      const timer = lateTolerantTimeout(() => {
        this.hub.notify('confirmation.resolved', { id, outcome: 'timeout' });
        entry.settle(fail.approvalTimeout(req.tool, timeoutMs));
      }, timeoutMs);
      const entry: Pending = {
        id,
        tool: req.tool,
        plugin: req.plugin,
        params: req.params,
        expiresAt,
        caller,
        byUser: req.byUser === true,
        deadline,
        ...(req.target ? { target: req.target } : {}),
        ...(req.risk ? { risk: req.risk } : {}),
        ...(req.note ? { note: req.note } : {}),
        ...(req.interaction ? { interaction: true as const } : {}),
        settle: (d) => {
          if (!this.pending.delete(id)) return;
          timer.clear();
          req.signal?.removeEventListener('abort', onAbort);
          if (d instanceof Error) reject(d);
          else resolve(d);
        },
      };
      this.pending.set(id, entry);
      req.signal?.addEventListener('abort', onAbort, { once: true });
      try {
        this.hub.notify('confirmation.request', shown(entry));
      } catch (err) {
        // Not shown to the user (e.g. params that cannot be serialized): no card waits for it.
        entry.settle(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      req.onPending?.({ id, expiresAt, timeoutMs });
    });
  }

  /**
   * A decision made outside the side panel (`opentabs approve` / `opentabs deny` through
   * POST /approvals/:id): settle it and take the card off the panel. False for an unknown id.
   */
  decide(id: string, decision: 'allow' | 'deny'): boolean {
    if (!this.respond(id, decision)) return false;
    this.hub.notify('confirmation.resolved', { id, outcome: decision === 'allow' ? 'allowed' : 'denied' });
    return true;
  }

  /** confirmation.response from the extension. Unknown ids (already timed out) are ignored. */
  respond(id: string, decision: 'allow' | 'deny', alwaysAllow?: boolean): boolean {
    const p = this.pending.get(id);
    if (!p) return false;
    p.settle({ decision, alwaysAllow });
    return true;
  }

  /**
   * The waiting approvals; `clientsOnly`: without the user's own calls (what the client token is
   * shown: their arguments are the user's, an agent has no business reading them).
   */
  list(clientsOnly = false): PendingConfirmation[] {
    const all = [...this.pending.values()];
    return (clientsOnly ? all.filter((p) => !p.byUser) : all).map(shown);
  }

  resendPending(): void {
    for (const p of this.list()) this.hub.notify('confirmation.request', p);
  }

  /**
   * The extension's connection went (closed, replaced, gone silent): every card of a page asking
   * for the user's input ends now. The page asked over that connection, which can carry no answer
   * back to it (the extension fails that call on its side, and the agent's call failed with the
   * connection), so the card would only wait out its timeout, answerable for nothing.
   */
  endInteractions(): void {
    for (const p of [...this.pending.values()]) {
      if (!p.interaction) continue;
      this.hub.notify('confirmation.resolved', { id: p.id, outcome: 'cancelled' });
      p.settle(fail.disconnected());
    }
  }

  /** End every waiting approval with the error `reason` makes for its tool (e.g. server_shutting_down). */
  cancelAll(reason: (tool: string) => OpenTabsError): void {
    for (const p of [...this.pending.values()]) p.settle(reason(p.tool));
  }
}

/** Open tabs listed on a card for a plugin call without an explicit tab. */
const MAX_CANDIDATE_TABS = 5;

/**
 * What a call touches, as far as the server knows before it runs: the explicit tab (REST `tabId`
 * or a `tabId` argument), the page (a built-in's `url` argument, else that tab's URL as the
 * extension last reported it for some plugin) and its domain; for a plugin tool without a tab, the plugin's
 * open tabs (the extension runs it in the best-ranked one).
 */
export function confirmationTarget(
  hub: Pick<HubView, 'tabsFor' | 'allTabStates'>,
  tool: { kind: 'browser' | 'plugin' | 'page'; plugin: string },
  args: Record<string, unknown>,
  explicitTabId?: number,
  /** The URL the tab shows now, when the caller looked it up (built-in calls: tab.page). */
  tabUrl?: string,
): ConfirmationTarget {
  const target: ConfirmationTarget = {};
  const tabId = explicitTabId ?? (typeof args.tabId === 'number' ? args.tabId : undefined);
  if (tabId !== undefined) target.tabId = tabId;
  // A built-in's `url` argument is the page it opens or acts on; one that names a site by its
  // origin (browser_clear_site_data) is about that site. A plugin tool always runs in a tab of its
  // plugin: a `url` argument of its own is only an argument (shown with the others), never the
  // page the card names, and it does not stand in for the plugin's tabs.
  let url = tool.kind !== 'browser' ? tabUrl : typeof args.url === 'string' ? args.url : typeof args.origin === 'string' ? args.origin : tabUrl;
  if (url === undefined && tabId !== undefined) {
    for (const s of hub.allTabStates().values()) {
      const t = s.tabs.find((x) => x.tabId === tabId);
      if (t) {
        url = t.url;
        break;
      }
    }
  }
  if (url === undefined && tabId === undefined && tool.kind === 'plugin') {
    const tabs = hub.tabsFor(tool.plugin).tabs;
    if (tabs.length === 1) {
      target.tabId = tabs[0]!.tabId;
      url = tabs[0]!.url;
    } else if (tabs.length > 1) target.candidateTabs = tabs.slice(0, MAX_CANDIDATE_TABS).map((t) => ({ tabId: t.tabId, url: t.url }));
  }
  if (url !== undefined) {
    target.url = url;
    const domain = domainOf(url);
    if (domain) target.domain = domain;
  }
  // A cookie with a Domain goes to that domain and every subdomain of it, not only the URL's host.
  if (tool.kind === 'browser' && typeof args.domain === 'string' && args.domain.replace(/^\./, '') !== '') target.domain = `${args.domain.replace(/^\./, '')} and its subdomains`;
  return target;
}

function domainOf(url: string): string | undefined {
  try {
    const u = new URL(url);
    if (u.protocol === 'file:') return 'local file';
    return u.hostname || undefined;
  } catch {
    return undefined;
  }
}
