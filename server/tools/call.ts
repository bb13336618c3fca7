/**
 * callTool(): the ONE call path. /mcp, /mcp/gateway and POST /tools/:name/call all end here;
 * transports only translate the outcome.
 *
 *   resolve → permission off? → validate (Ajv, cached per catalog version) → per-plugin gate →
 *   ask? (confirmation) → dispatch (server-served or extension) → audit → outcome
 *
 * Validation runs before asking, so the user never approves a call that would be rejected (except
 * by a regular expression of its schema: those are checked in the page, see validate.ts).
 * The gate is taken before asking, so an approved call is never refused for being one too many.
 */
import type { CoreDeps } from '../deps.ts';
import type { ExtensionHub } from '../hub/hub.ts';
import { OpenTabsError } from '../errors.ts';
import type { DispatchProgress } from '../hub/hub.ts';
import { confirmationTarget } from '../hub/confirmations.ts';
import type { ConfirmationTarget, LogEntry } from '../protocol/methods.ts';
import { PAGE_TOOL_MAX_CONCURRENCY_PER_ORIGIN, TAB_PAGE_TIMEOUT_MS, TOOL_ARGS_MAX_DEPTH } from '../limits.ts';
import type { Catalog, CatalogTool } from './catalog.ts';
import { approvalWaitMessage, type ApprovalEvent } from './approval-notice.ts';
import { asOpenTabsError, fail } from './call-errors.ts';
import { effectivePermission } from './permissions.ts';
import { serverToolHandler } from './server-tools.ts';
import { suggestTools } from './suggest.ts';
import { markPageResult } from './page-tools.ts';
import { uploadPathsError } from './upload-guard.ts';
import { stageUploads } from './upload-staging.ts';
import { interceptPatternError } from '../protocol/intercept-scheme.ts';
import { maskValues, secretArgValues } from './secret-args.ts';
import { settingRequiredError } from '../plugins/settings.ts';
import type { AuditApproval } from '../state/audit-entry.ts';
import { AUDIT_FIELD_MAX_CHARS } from '../state/audit.ts';

export interface CallContext {
  transport: 'mcp' | 'gateway' | 'rest';
  /** MCP session id (routes plugin logs and progress back to the caller). */
  sessionId?: string;
  /**
   * REST only: the request carried the secret of auth.json (the user's `opentabs tool call`,
   * scripts), not the client token MCP client configs hold. The user's calls keep a slot of every
   * plugin and a way to ask whatever clients hold; a REST call without it counts as one more client.
   */
  withSecret?: boolean;
  /** Explicit tab for the call (REST `tabId`). */
  tabId?: number;
  /** Aborted when the client cancels (MCP notifications/cancelled, closed HTTP request). */
  signal?: AbortSignal;
  onProgress?: (p: DispatchProgress) => void;
  /** Plugin log lines emitted by this call (MCP sends them to the calling session). */
  onLog?: (entry: LogEntry) => void;
  /** The call waits for the user's approval, and then how it was decided (see approval-notice.ts). */
  onApproval?: (e: ApprovalEvent) => void;
}

export interface ImageOut {
  data: string;
  mimeType: string;
}

export interface ResourceOut {
  uri: string;
  mimeType: string;
  /** base64 */
  blob: string;
}

/** What the call path uses: every core part and the extension hub (it dispatches and asks). */
export type CallDeps = CoreDeps & { readonly hub: ExtensionHub };

export type ToolOutcome =
  | { ok: true; tool: CatalogTool; value: unknown; images?: ImageOut[]; resources?: ResourceOut[]; text?: string }
  | { ok: false; tool?: CatalogTool; error: OpenTabsError };


/** The user's own call: REST with the secret. */
const byUser = (call: CallContext): boolean => call.transport === 'rest' && call.withSecret === true;

/** Whom a call counts against: its MCP session, the user's REST calls, or REST calls made with the client token. */
function callerOf(call: CallContext): string {
  if (call.sessionId !== undefined) return call.sessionId;
  if (call.transport === 'rest') return byUser(call) ? 'rest' : 'rest-client';
  return call.transport;
}

const EMPTY_ARGS: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

/**
 * The risk an approval card shows for a plugin or page tool its author marks destructive
 * (annotations.destructiveHint: true, from defineTool or registerTool); the card reads
 * "It <risk>.". Fixed text: the tool's own words are not put in the question that guards Always allow.
 */
export const DESTRUCTIVE_RISK = 'may change or delete data (its author marks it destructive)';

export async function callTool(ctx: CallDeps, name: string, args: unknown, call: CallContext): Promise<ToolOutcome> {
  const startedAt = Date.now();
  const catalog = ctx.catalog.current();
  const tool = catalog.get(name);
  if (!tool) return { ok: false, error: fail.unknownTool(name, suggestTools(name, catalog.tools, ctx.plugins.failed())) };
  if (ctx.calls.stopping) return { ok: false, tool, error: fail.shuttingDown(tool.name) };

  ctx.calls.enter();
  try {
    let outcome: ToolOutcome;
    // How the user answered, when the call asked: its audit entry says so.
    const asked: Asked = {};
    try {
      outcome = await run(ctx, catalog, tool, args, call, asked);
    } catch (err) {
      outcome = { ok: false, tool, error: asOpenTabsError(err) };
    }
    await audit(ctx, tool, outcome, Date.now() - startedAt, asked.approval, args);
    return outcome;
  } finally {
    ctx.calls.leave();
  }
}

interface Asked {
  approval?: AuditApproval;
}

async function run(ctx: CallDeps, catalog: Catalog, tool: CatalogTool, rawArgs: unknown, call: CallContext, asked: Asked): Promise<ToolOutcome> {
  const permission = effectivePermission(ctx, tool.permission);
  if (permission === 'off') return { ok: false, tool, error: fail.permissionOff(tool.name, tool.plugin, tool.shortName) };

  const args = rawArgs === undefined || rawArgs === null ? EMPTY_ARGS : rawArgs;
  if (typeof args !== 'object' || Array.isArray(args)) {
    return { ok: false, tool, error: fail.invalidArguments(tool.name, '', 'arguments must be a JSON object') };
  }
  if (nestedDeeperThan(args, TOOL_ARGS_MAX_DEPTH)) {
    return { ok: false, tool, error: fail.invalidArguments(tool.name, '', `arguments are nested more than ${TOOL_ARGS_MAX_DEPTH} levels deep`) };
  }
  // Validate against the snapshot the tool was resolved in (a rebuild mid-call must not mix versions).
  const failure = catalog.validate(tool, args);
  if (failure) {
    const error = failure.schemaError ? fail.brokenSchema(tool.name, failure.message) : fail.invalidArguments(tool.name, failure.path, failure.message);
    return { ok: false, tool, error };
  }

  // A plugin whose required setting is not set: said before anyone is asked (the page checks too).
  if (tool.kind === 'plugin') {
    const unset = ctx.plugins.missingRequiredSetting(tool.plugin);
    if (unset) return { ok: false, tool, error: settingRequiredError(tool.name, tool.plugin, unset.key, unset.field) };
  }

  // Files the page would get: where they really are is checked here, before the user is asked.
  if (tool.kind === 'browser' && tool.name === 'browser_upload_file') {
    const refused = uploadPathsError(ctx.configDir, (args as { paths: string[] }).paths, ctx.config.get().uploadFolders);
    if (refused) return { ok: false, tool, error: refused };
  }

  // Interception patterns of another scheme than http(s): refused before anyone is asked (the extension refuses them too).
  if (tool.kind === 'browser' && tool.name === 'browser_intercept_requests') {
    for (const [k, r] of ((args as { rules?: { urlPattern: string }[] }).rules ?? []).entries()) {
      const refused = interceptPatternError(r.urlPattern, k);
      if (refused) return { ok: false, tool, error: fail.invalidArguments(tool.name, `/rules/${k}/urlPattern`, refused) };
    }
  }

  // A page tool runs only in the tab that registered it.
  if (tool.kind === 'page' && call.tabId !== undefined && call.tabId !== tool.tabId) {
    return { ok: false, tool, error: fail.invalidArguments(tool.name, '', `${tool.name} belongs to tab ${tool.tabId}; drop tabId or pass ${tool.tabId}`) };
  }
  // Built-in browser tools are not a plugin: the per-plugin gate applies to plugin tools, and
  // per origin to page tools (tool.plugin is "page:<origin>"). Built-in calls are counted per
  // caller, so one client cannot have the extension run thousands at once (one MCP batch).
  // A call takes its slot once it may run: one waiting for approval runs nothing, and a client
  // holding its pending approvals in a plugin's slots would leave every other caller of that plugin
  // too_many_in_flight for as long as the cards wait. A plugin at its limit is refused before asking.
  const limit = tool.kind === 'page' ? PAGE_TOOL_MAX_CONCURRENCY_PER_ORIGIN : tool.kind === 'browser' ? ctx.limits.builtinMaxInFlightPerCaller : ctx.limits.pluginMaxConcurrency;
  const gateKey = tool.kind !== 'browser' ? tool.plugin : `builtin\0${callerOf(call)}`;
  const busy = (): ToolOutcome => ({
    ok: false,
    tool,
    error: tool.kind === 'browser' ? fail.tooManyBuiltinInFlight(tool.name, ctx.limits.builtinMaxInFlightPerCaller) : fail.tooManyInFlight(tool.plugin, limit),
  });
  // Clients together (MCP callers, and REST calls made with the client token) hold at most all but
  // one of a plugin's (or a page origin's) slots: the last is left to the user's REST calls
  // (`opentabs tool call`, scripts with the secret), which may take them all. A share per MCP
  // caller alone did not keep it: an agent with two sessions, or a session and stateless requests,
  // held every slot with slow calls and left the user's call too_many_in_flight for as long as they
  // ran. One client caller (a session; every stateless request is one) holds at most all but two,
  // so a greedy one leaves another client a slot too.
  const mcpShare = limit - 1;
  const callerShare = limit > 2 ? limit - 2 : mcpShare;
  const shared = tool.kind !== 'browser' && !byUser(call) && mcpShare > 0;
  const mcpKey = shared ? `${gateKey}\0mcp` : undefined;
  const callerKey = shared ? `${gateKey}\0mcp\0${callerOf(call)}` : undefined;
  const busyForMcp = (): ToolOutcome => ({ ok: false, tool, error: fail.tooManyInFlightForMcp(tool.plugin, mcpShare, limit) });
  const busyForCaller = (): ToolOutcome => ({ ok: false, tool, error: fail.tooManyInFlightForCaller(tool.plugin, callerShare, limit) });
  if (ctx.gate.count(gateKey) >= limit) return busy();
  if (callerKey !== undefined && ctx.gate.count(callerKey) >= callerShare) return busyForCaller();
  if (mcpKey !== undefined && ctx.gate.count(mcpKey) >= mcpShare) return busyForMcp();
  let release: (() => void) | null = null;
  try {
    // A built-in call on a tab: the card names the page the tab shows, and the call runs only if
    // the tab still shows that site once allowed (the agent may navigate it while the card waits).
    // A plugin call runs in the tab the card named (or one of those it listed), on that site: the
    // agent could open another tab of the plugin (another account, another workspace of the same
    // app) while the card waits, and the extension would have picked it.
    let approvedUrl: string | undefined;
    // A plugin tool that takes an integer `tabId` argument names its tab with it, as REST's tabId
    // does: the same tab whether the call is asked about (the card names it) or runs on `auto`.
    const pluginArgTab = tool.kind === 'plugin' && typeof (args as { tabId?: unknown }).tabId === 'number' ? ((args as { tabId: number }).tabId) : undefined;
    let dispatchTabId = tool.kind === 'page' ? tool.tabId : call.tabId ?? pluginArgTab;
    let approvedTabs: { tabId: number; url: string }[] | undefined;
    if (permission === 'ask') {
      let approvalId: string | undefined;
      const tabId = call.tabId ?? (args as { tabId?: unknown }).tabId;
      // A plugin call naming its tab (REST tabId, or a tabId argument of its own) is asked about
      // and bound to the page that tab shows, as a built-in call is. A page tool's tab is its own.
      const tabUrl = tool.kind !== 'page' ? await tabPageUrl(ctx.hub, tabId) : undefined;
      // Tab ids are handed out in order: a card for a tab that does not exist yet would be an
      // approval for whatever page the agent opens next under that id.
      if (tabUrl === null) return { ok: false, tool, error: new OpenTabsError('tab_closed', `No tab with id ${tabId}; nothing was asked. Call browser_list_tabs for current ids.`, { category: 'not_found' }) };
      // A plugin call that names no tab runs in a tab the card lists. With no tab of the plugin
      // open there is nothing to list, and a card would only be allowed for a call that cannot
      // run (a tab opened while it waits is not one the user saw): say so without asking.
      if (tool.kind === 'plugin' && tabId === undefined && ctx.hub.connected && ctx.hub.tabsFor(tool.plugin).tabs.length === 0) return { ok: false, tool, error: fail.noPluginTab(tool.name) };
      const target = tool.kind === 'page' ? pageTarget(tool) : confirmationTarget(ctx.hub, tool, args as Record<string, unknown>, call.tabId, tabUrl ?? undefined);
      const d = await ctx.hub.confirm({
        tool: tool.name,
        plugin: tool.plugin,
        params: args,
        signal: call.signal,
        // The pending-approval cap counts per MCP session, the user's REST calls as one caller and
        // REST calls made with the client token as another; the cap on all callers leaves out the user's.
        caller: callerOf(call),
        byUser: byUser(call),
        target,
        // A built-in's risk the panel knows (its Tools section); a plugin or page tool marked
        // destructive by its author is named here.
        ...(tool.kind !== 'browser' && tool.annotations?.destructiveHint === true ? { risk: DESTRUCTIVE_RISK } : {}),
        // A page tool new or changed since the user chose Always allow for its origin: the card says so.
        ...(tool.approvalNote ? { note: tool.approvalNote } : {}),
        onPending: call.onApproval
          ? (p) => {
              approvalId = p.id;
              call.onApproval!({ state: 'waiting', ...p, message: approvalWaitMessage(tool.name, p.timeoutMs) });
            }
          : undefined,
      });
      asked.approval = d.decision !== 'allow' ? 'denied' : d.alwaysAllow ? 'always' : 'allowed';
      if (approvalId) call.onApproval?.({ state: d.decision === 'allow' ? 'approved' : 'denied', id: approvalId });
      if (d.decision !== 'allow') return { ok: false, tool, error: fail.denied(tool.name) };
      if (d.alwaysAllow) await rememberAlwaysAllow(ctx, tool);
      approvedUrl = tabUrl ?? undefined;
      // A page tool's card names the page that offered it: the call runs in a document of that URL only.
      if (tool.kind === 'page') approvedUrl = tool.url;
      if (tool.kind === 'plugin') {
        if (target.tabId !== undefined) {
          dispatchTabId = target.tabId;
          // The card's URL is the tab's (a plugin tool's own url argument is not a page).
          if (target.url !== undefined) approvedUrl = target.url;
        } else {
          // The tabs the card listed, each with the page it showed; none when no tab of the plugin
          // was open as it asked: then a tab opened while the card waited (another account,
          // another workspace of the app) is not one the user saw, and the call does not run.
          approvedTabs = (target.candidateTabs ?? []).map((c) => ({ tabId: c.tabId, url: c.url }));
        }
      }
    }
    release = ctx.gate.tryAcquire(gateKey, limit);
    if (!release) return busy();
    if (callerKey !== undefined && mcpKey !== undefined) {
      // Refused here, the slots taken so far are given back by `finally` (release).
      const mine = ctx.gate.tryAcquire(callerKey, callerShare);
      if (!mine) return busyForCaller();
      const plugin = release;
      release = () => {
        mine();
        plugin();
      };
      const ofMcp = ctx.gate.tryAcquire(mcpKey, mcpShare);
      if (!ofMcp) return busyForMcp();
      const taken = release;
      release = () => {
        ofMcp();
        taken();
      };
    }
    // Served by the server, after the same permission step as every other tool.
    if (tool.servedBy === 'server') {
      const handler = serverToolHandler(tool.name);
      if (!handler) return { ok: false, tool, error: fail.internal(`Tool "${tool.name}" is marked as served by the server but has no handler.`) };
      const callAnother = (name: string, a: Record<string, unknown>) => callTool(ctx, name, a, { transport: call.transport, sessionId: call.sessionId, withSecret: call.withSecret, signal: call.signal });
      return { ok: true, tool, value: await handler(ctx, args as Record<string, unknown>, callAnother) };
    }
    let input = args as Record<string, unknown>;
    // The files again, as they are now (a card may have waited minutes, and a path checked then
    // may lead elsewhere since), copied where only the server writes: Chrome reads the copies,
    // which no later swap of a path for a link can change (upload-staging.ts).
    if (tool.kind === 'browser' && tool.name === 'browser_upload_file') {
      try {
        input = { ...input, paths: await stageUploads(ctx.configDir, (args as { paths: string[] }).paths, ctx.config.get().uploadFolders) };
      } catch (err) {
        return { ok: false, tool, error: asOpenTabsError(err) };
      }
    }
    const result = await ctx.hub.dispatch({
      plugin: tool.plugin,
      wireName: tool.shortName,
      fullName: tool.name,
      input,
      tabId: dispatchTabId,
      settings: tool.kind === 'plugin' ? pluginSettings(ctx, tool.plugin) : undefined,
      ...(approvedUrl !== undefined ? { approvedUrl } : {}),
      ...(approvedTabs !== undefined ? { approvedTabs } : {}),
      signal: call.signal,
      onProgress: call.onProgress,
      onLog: call.onLog,
      sessionId: call.sessionId,
    });
    return {
      ok: true,
      tool,
      // A page's result says first which site wrote it, whichever transport carries it.
      value: tool.kind === 'page' && tool.origin ? markPageResult(result.value, tool.origin) : result.value,
      ...(result.images && result.images.length > 0 ? { images: result.images } : {}),
      ...(result.resources && result.resources.length > 0 ? { resources: result.resources } : {}),
      ...(typeof result.text === 'string' ? { text: result.text } : {}),
    };
  } finally {
    release?.();
  }
}

/** Whether objects and arrays in `value` nest more than `max` levels (no recursion: any depth is safe to check). */
function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: { v: unknown; depth: number }[] = [{ v: value, depth: 1 }];
  while (stack.length > 0) {
    const { v, depth } = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === 'object') stack.push({ v: child, depth: depth + 1 });
  }
  return false;
}

/** The URL tab `tabId` shows now (asked of the extension): null when there is no such tab, undefined when unknown. */
async function tabPageUrl(hub: ExtensionHub, tabId: unknown): Promise<string | null | undefined> {
  if (typeof tabId !== 'number') return undefined;
  try {
    const r = await hub.request('tab.page', { tabId }, { timeoutMs: TAB_PAGE_TIMEOUT_MS });
    return r.url;
  } catch {
    // An extension that cannot say: the card names the tab only, and the call is not bound to a page.
    return undefined;
  }
}

function pluginSettings(ctx: CallDeps, plugin: string): Record<string, unknown> | undefined {
  try {
    return ctx.plugins.resolvedSettings(plugin);
  } catch {
    return undefined;
  }
}

/** The approval card of a page tool: its tab, URL and origin. */
function pageTarget(tool: CatalogTool): ConfirmationTarget {
  const target: ConfirmationTarget = {};
  if (tool.tabId !== undefined) target.tabId = tool.tabId;
  if (tool.url !== undefined) target.url = tool.url;
  if (tool.origin !== undefined) target.domain = tool.origin;
  return target;
}

/**
 * "Always allow": store `auto` for this tool (for a page tool: for the tools its origin offers now,
 * each as it is now: one the page adds or changes later asks again), rebuild (list_changed) and
 * re-sync the side panel.
 */
async function rememberAlwaysAllow(ctx: CallDeps, tool: CatalogTool): Promise<void> {
  try {
    if (tool.kind === 'page' && tool.origin) await ctx.config.allowPageTools(tool.origin, { ...ctx.catalog.pageTools.offeredBy(tool.origin), ...(tool.pageToolHash ? { [tool.shortName]: tool.pageToolHash } : {}) });
    else await ctx.config.setToolPermission(tool.plugin, tool.shortName, 'auto');
    ctx.catalog.rebuild();
  } catch (err) {
    ctx.log?.error('always_allow_failed', { tool: tool.name, error: String((err as Error)?.message ?? err) });
  }
}

async function audit(ctx: CallDeps, tool: CatalogTool, outcome: ToolOutcome, durationMs: number, approval: AuditApproval | undefined, args: unknown): Promise<void> {
  try {
    await ctx.audit.record(
      outcome.ok
        ? { timestamp: new Date().toISOString(), tool: tool.name, plugin: tool.plugin, success: true, durationMs, ...(approval ? { approval } : {}) }
        : {
            timestamp: new Date().toISOString(),
            tool: tool.name,
            plugin: tool.plugin,
            success: false,
            durationMs,
            error: {
              code: String(outcome.error.code),
              // A message quoting an argument that looks like a secret is recorded without it (secret-args.ts).
              message: maskValues(outcome.error.message, secretArgValues(args), AUDIT_FIELD_MAX_CHARS.message),
              ...(outcome.error.extra.category ? { category: outcome.error.extra.category } : {}),
            },
            ...(approval ? { approval } : {}),
          },
    );
  } catch (err) {
    ctx.log?.error('audit_failed', { tool: tool.name, error: String((err as Error)?.message ?? err) });
  }
}
