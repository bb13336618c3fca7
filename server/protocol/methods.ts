/**
 * Every WebSocket method between server and extension, defined once. Both ends' RPC peer
 * (rpc-peer.ts) checks incoming params with these schemas and types its handler table from them;
 * the extension imports the same file (bundled by esbuild). Adding a method = one entry here
 * plus a handler on each side (tsc fails until both exist).
 * Two tables: ServerToExtension and ExtensionToServer, named for who sends.
 */
import * as v from 'valibot';
import { ERROR_CATEGORIES } from './errors.ts';

// ---------------------------------------------------------------- shared shapes

export const Permission = v.picklist(['off', 'ask', 'auto']);
export type Permission = v.InferOutput<typeof Permission>;

export const TabState = v.picklist(['closed', 'unavailable', 'ready']);
export type TabState = v.InferOutput<typeof TabState>;

export const TabInfo = v.object({
  tabId: v.pipe(v.number(), v.integer()),
  url: v.string(),
  title: v.string(),
  ready: v.boolean(),
  /** The plugin's module threw while loading in this tab (the error's message); the tab is not ready. */
  loadError: v.optional(v.string()),
});
export type TabInfo = v.InferOutput<typeof TabInfo>;

/** What the extension needs to know about one plugin (sent in sync.full / plugin.update). */
export const PluginTool = v.object({
  /** Short tool name as the plugin defines it (e.g. "list_items"). */
  name: v.string(),
  /** Prefixed name as clients see it (e.g. "myapp_list_items"). */
  fullName: v.string(),
  description: v.string(),
  permission: Permission,
});
export type PluginTool = v.InferOutput<typeof PluginTool>;

export const PluginInfo = v.object({
  name: v.string(),
  displayName: v.string(),
  description: v.string(),
  version: v.string(),
  urlPatterns: v.array(v.string()),
  excludePatterns: v.array(v.string()),
  homepage: v.optional(v.string()),
  iconSvg: v.optional(v.string()),
  source: v.picklist(['local', 'npm']),
  /** Path of the adapter inside the extension folder, e.g. "adapters/myapp-1a2b3c4d.js". */
  adapterFile: v.string(),
  adapterHash: v.string(),
  tools: v.array(PluginTool),
  /** configSchema as declared by the plugin (for the side panel's settings form). */
  configSchema: v.optional(v.record(v.string(), v.unknown())),
  /** Resolved settings passed to handlers as ctx.config. */
  settings: v.record(v.string(), v.unknown()),
  permission: Permission,
  /**
   * false when every tool is off: nothing of the plugin may run in a page (no bridge, no adapter;
   * adapters already injected are disposed). sync.full lists only enabled plugins; config.getState
   * lists all, so the side panel can turn them on.
   */
  enabled: v.optional(v.boolean()),
  /** urlPatterns that match every site or every file (the side panel warns "runs on every site"). */
  broadPatterns: v.optional(v.array(v.string())),
  /** With broadPatterns: whether the user consented (`--allow-broad-patterns`); without it the plugin runs in no page. */
  broadConsent: v.optional(v.boolean()),
});
export type PluginInfo = v.InferOutput<typeof PluginInfo>;

/**
 * What an `ask` call would touch, as far as the server knows it when asking: the tab (REST
 * `tabId` or a `tabId` argument) and its URL (a `url` argument, or the tab as the extension last
 * reported it), the domain of that URL, and for plugin tools without an explicit tab the tabs the
 * call may run in. The side panel shows it before the arguments.
 */
export const ConfirmationTarget = v.object({
  tabId: v.optional(v.number()),
  url: v.optional(v.string()),
  domain: v.optional(v.string()),
  /** Plugin tools without an explicit tab: the plugin's open tabs (the extension picks one). */
  candidateTabs: v.optional(v.array(v.object({ tabId: v.number(), url: v.string() }))),
});
export type ConfirmationTarget = v.InferOutput<typeof ConfirmationTarget>;

export const FailedPlugin = v.object({ path: v.string(), error: v.string(), name: v.optional(v.string()) });
export type FailedPlugin = v.InferOutput<typeof FailedPlugin>;

export const BrowserToolInfo = v.object({
  name: v.string(),
  description: v.string(),
  permission: Permission,
  group: v.string(),
  /** Why the tool deserves care (runs code, reads cookies …); the side panel marks it. */
  risk: v.optional(v.string()),
});
export type BrowserToolInfo = v.InferOutput<typeof BrowserToolInfo>;

export const ToolErrorData = v.object({
  code: v.string(),
  category: v.optional(v.picklist(ERROR_CATEGORIES)),
  retryable: v.optional(v.boolean()),
  retryAfterMs: v.optional(v.number()),
});
export type ToolErrorData = v.InferOutput<typeof ToolErrorData>;

export const ImageContent = v.object({ data: v.string(), mimeType: v.string() });
/** A file a tool returns whole (browser_print_pdf): MCP embedded-resource content, base64 in `blob`. */
export const ResourceContent = v.object({ uri: v.string(), mimeType: v.string(), blob: v.string() });

/** Result of a tool.dispatch request. `value` is the tool's JSON output. */
export const DispatchResult = v.object({
  value: v.unknown(),
  images: v.optional(v.array(ImageContent)),
  /** Files (a PDF): MCP `resource` content; REST returns them as `resources`. */
  resources: v.optional(v.array(ResourceContent)),
  /**
   * What the model reads instead of the value's JSON (MCP text content), for results that are
   * text by nature (browser_snapshot): no escaped quotes and newlines, no structuredContent copy.
   * REST keeps returning the value.
   */
  text: v.optional(v.string()),
});
export type DispatchResult = v.InferOutput<typeof DispatchResult>;

export const LogLevel = v.picklist(['debug', 'info', 'warning', 'error']);
export type LogLevel = v.InferOutput<typeof LogLevel>;

export const LogEntry = v.object({
  plugin: v.string(),
  level: LogLevel,
  message: v.string(),
  data: v.optional(v.unknown()),
  ts: v.number(),
  /** The dispatch this log line came from, when known (routes logs to the calling session). */
  dispatchId: v.optional(v.string()),
});
export type LogEntry = v.InferOutput<typeof LogEntry>;

/** Full state as the side panel sees it (answer to config.getState). */
/** A call waiting for the user's approval, as the side panel lists it (confirmation.request, config.getState). */
export const PendingConfirmation = v.object({
  id: v.string(),
  tool: v.string(),
  plugin: v.string(),
  params: v.unknown(),
  /** When the server stops waiting, on the server's wall clock (another machine's clock may differ). */
  expiresAt: v.number(),
  target: v.optional(ConfirmationTarget),
  /**
   * Milliseconds the server still waits, as of sending this: the side panel counts them from when
   * it received the card, so a browser clock ahead of the server's does not hide a card still waiting.
   */
  remainingMs: v.optional(v.number()),
  /**
   * Why the call deserves care, for a plugin or page tool its author marks destructive
   * (annotations.destructiveHint): the card shows it, and its Always allow asks once more, as for
   * a built-in with a risk mark (BrowserToolInfo.risk).
   */
  risk: v.optional(v.string()),
  /** Why a page tool is asked about again: new or changed since the user chose Always allow for its origin. */
  note: v.optional(v.string()),
  /**
   * Not a call to approve: a page tool, while it runs, asks for the user's input
   * (requestUserInteraction). Allow shows its tab and lets the page go on; Deny fails the call.
   */
  interaction: v.optional(v.literal(true)),
});
export type PendingConfirmation = v.InferOutput<typeof PendingConfirmation>;

export const ConfigState = v.object({
  serverVersion: v.string(),
  /** MCP sessions open now. */
  mcpClients: v.optional(v.number()),
  /**
   * mcpClients split as /health's mcpSessions and `opentabs status` split them (the side panel's
   * header): active (a request running, a stream open, or a request within activeWindowSeconds)
   * and idle (often a client that exited without closing its session; closed after idleCloseSeconds).
   */
  mcpSessions: v.optional(v.object({ active: v.number(), idle: v.number(), activeWindowSeconds: v.number(), idleCloseSeconds: v.number() })),
  skipPermissions: v.boolean(),
  /**
   * Another browser with the extension (another Chrome profile or install) waits for the server
   * while this one holds it (/health otherBrowser.waiting): the side panel of the browser in use
   * says so, and how to switch.
   */
  otherBrowserWaiting: v.optional(v.boolean()),
  /** config.json allowFileUrls (the side panel's file:// toggle). */
  allowFileUrls: v.optional(v.boolean()),
  plugins: v.array(PluginInfo),
  failedPlugins: v.array(FailedPlugin),
  browserTools: v.array(BrowserToolInfo),
  pendingConfirmations: v.array(PendingConfirmation),
  /** Page tools (WebMCP) grouped by origin: its permission (stored or `ask`) and the tabs offering tools now. */
  pageOrigins: v.optional(
    v.array(
      v.object({
        origin: v.string(),
        permission: Permission,
        tabs: v.array(v.object({ tabId: v.number(), url: v.string(), tools: v.array(v.string()) })),
      }),
    ),
  ),
});
export type ConfigState = v.InferOutput<typeof ConfigState>;

const Ok = v.object({ ok: v.literal(true) });

// ---------------------------------------------------------------- server → extension

export const ServerToExtension = {
  /** Full plugin list — on connection and after reload. */
  'sync.full': {
    kind: 'notification',
    params: v.object({
      plugins: v.array(PluginInfo),
      browserTools: v.array(BrowserToolInfo),
      serverVersion: v.string(),
      /** config.json allowFileUrls: built-in tools may use file:// pages (extension/tools/url-policy.ts). */
      allowFileUrls: v.optional(v.boolean()),
      /** Folders file:// pages stay refused in even then (the config dir: auth.json, config.json). */
      protectedPaths: v.optional(v.array(v.string())),
    }),
  },
  /** One plugin changed (file watcher). */
  'plugin.update': { kind: 'notification', params: v.object({ plugin: PluginInfo }) },
  /** Plugin removed — the extension drops its adapter and confirms. */
  'plugin.uninstall': { kind: 'request', params: v.object({ name: v.string() }), result: Ok },
  /** Registry changed — the side panel refreshes. */
  'plugins.changed': { kind: 'notification', params: v.object({}) },
  /** Run a tool. `plugin` is "browser" for built-in tools. */
  'tool.dispatch': {
    kind: 'request',
    params: v.object({
      dispatchId: v.string(),
      plugin: v.string(),
      /** Short tool name for plugin tools; full name (browser_*, extension_*) for built-ins. */
      tool: v.string(),
      input: v.record(v.string(), v.unknown()),
      /** Explicit tab; must match the plugin's URL patterns. */
      tabId: v.optional(v.pipe(v.number(), v.integer())),
      settings: v.optional(v.record(v.string(), v.unknown())),
      /**
       * A call the user approved: the URL its tab showed on the card (a built-in's from tab.page, a
       * plugin call's from the plugin's tab states). The extension runs it only if the tab still
       * shows that site, else tab_mismatch.
       */
      approvedUrl: v.optional(v.string()),
      /**
       * A plugin call the user approved on a card listing several of the plugin's tabs, each with
       * the URL the card showed for it: it runs in one of these while it still shows that site,
       * never in a tab opened since (else tab_mismatch).
       */
      approvedTabs: v.optional(v.array(v.object({ tabId: v.pipe(v.number(), v.integer()), url: v.string() }))),
      /**
       * A built-in call made in an MCP session: an id of that session of its own (not the
       * session's id, which lets a client use it). What the call changes on the tab beyond itself
       * (emulation, request interception, forced pseudo states) remembers it, and ends when
       * session.ended names it. Absent for calls of no session (REST).
       */
      session: v.optional(v.pipe(v.string(), v.maxLength(64))),
      /**
       * When the server sent the call (Date.now(), the one clock both ends share). A call that
       * reaches the extension much later (Chrome or the computer was frozen meanwhile) is not run:
       * the server may have failed it already and the agent retried it.
       */
      sentAt: v.optional(v.number()),
    }),
    result: DispatchResult,
  },
  /**
   * The MCP session that `tool.dispatch` named `session` ended (DELETE /mcp, the idle sweep, its
   * stream closed, the server stopping): what only it changed on the user's tabs is undone. An id
   * the extension does not know is ignored.
   */
  'session.ended': { kind: 'notification', params: v.object({ session: v.pipe(v.string(), v.maxLength(64)) }) },
  /** The page a tab shows, for an approval card: null when there is no such tab; scheme and host only for a page the tools refuse. */
  'tab.page': { kind: 'request', params: v.object({ tabId: v.pipe(v.number(), v.integer()) }), result: v.object({ url: v.nullable(v.string()) }) },
  /** Stop a running dispatch (client cancelled or server gave up); the extension aborts the handler's signal. */
  'tool.cancel': { kind: 'notification', params: v.object({ dispatchId: v.string(), reason: v.string() }) },
  /** Sent right after the tool.dispatch frame (same socket write), for the side panel. */
  'tool.invocationStart': {
    kind: 'notification',
    params: v.object({ dispatchId: v.string(), tool: v.string(), plugin: v.string(), ts: v.number() }),
  },
  'tool.invocationEnd': {
    kind: 'notification',
    params: v.object({ dispatchId: v.string(), tool: v.string(), plugin: v.string(), success: v.boolean(), durationMs: v.number() }),
  },
  /** Ask the user. Answer comes back as confirmation.response. */
  'confirmation.request': {
    kind: 'notification',
    params: PendingConfirmation,
  },
  /** A pending confirmation ended without a user decision (timed out / call cancelled). */
  'confirmation.resolved': { kind: 'notification', params: v.object({ id: v.string(), outcome: v.string() }) },
  'extension.reload': { kind: 'notification', params: v.object({}) },
  pong: { kind: 'notification', params: v.optional(v.object({})) },
} as const;

// ---------------------------------------------------------------- extension → server

const TabSnapshot = v.object({ state: TabState, tabs: v.array(TabInfo) });

export const ExtensionToServer = {
  /** Full tab-to-plugin mapping — on connection. */
  'tab.syncAll': { kind: 'notification', params: v.object({ plugins: v.record(v.string(), TabSnapshot) }) },
  'tab.stateChanged': {
    kind: 'request',
    params: v.object({ plugin: v.string(), state: TabState, tabs: v.array(TabInfo) }),
    result: Ok,
  },
  'tool.progress': {
    kind: 'notification',
    params: v.object({
      dispatchId: v.string(),
      progress: v.number(),
      total: v.optional(v.number()),
      message: v.optional(v.string()),
    }),
  },
  'plugin.log': { kind: 'notification', params: v.object({ entries: v.array(LogEntry) }) },
  /** A side panel opened or the last one closed: tool.invocationStart/End are sent only while one is open. */
  'panel.state': { kind: 'notification', params: v.object({ open: v.boolean() }) },
  'config.getState': { kind: 'request', params: v.optional(v.object({})), result: ConfigState },
  'config.setToolPermission': {
    kind: 'request',
    params: v.object({ plugin: v.string(), tool: v.string(), permission: Permission }),
    result: Ok,
  },
  'config.setPluginPermission': {
    kind: 'request',
    params: v.object({ plugin: v.string(), permission: Permission }),
    result: Ok,
  },
  'config.setSkipPermissions': { kind: 'request', params: v.object({ skip: v.boolean() }), result: Ok },
  /** Only the side panel sends this (the worker relays it from the real panel only); no tool can. */
  'config.setAllowFileUrls': { kind: 'request', params: v.object({ allow: v.boolean() }), result: Ok },
  'config.setPluginSettings': {
    kind: 'request',
    params: v.object({ plugin: v.string(), settings: v.record(v.string(), v.unknown()) }),
    result: Ok,
  },
  'plugin.search': {
    kind: 'request',
    params: v.object({ query: v.string() }),
    result: v.object({ results: v.array(v.object({ name: v.string(), version: v.string(), description: v.string() })) }),
  },
  'plugin.install': { kind: 'request', params: v.object({ spec: v.string() }), result: v.object({ ok: v.literal(true), name: v.string() }) },
  'plugin.updateFromRegistry': { kind: 'request', params: v.object({ name: v.string() }), result: Ok },
  'plugin.remove': { kind: 'request', params: v.object({ name: v.string() }), result: Ok },
  'plugin.checkUpdates': {
    kind: 'request',
    params: v.optional(v.object({})),
    result: v.object({ updates: v.array(v.object({ name: v.string(), current: v.string(), latest: v.string() })) }),
  },
  'plugin.removeBySpecifier': { kind: 'request', params: v.object({ specifier: v.string() }), result: Ok },
  'folder.open': { kind: 'request', params: v.object({ path: v.string() }), result: Ok },
  /**
   * Where file paths lead on this computer (symbolic links followed, as Chrome follows them when it
   * opens a file:// URL): the extension judges a file:// page by the file it really shows, not only
   * by the path in its URL (a visible link to ~/.ssh/id_rsa). A path that does not exist yet is its
   * deepest existing folder's real path with the rest appended. `linked`: whether the path leads to
   * a regular file with more than one name (a hard link), whose other names may be hidden files'.
   */
  'file.realPaths': {
    kind: 'request',
    params: v.object({ paths: v.pipe(v.array(v.pipe(v.string(), v.maxLength(8192))), v.maxLength(256)) }),
    result: v.object({ real: v.array(v.string()), linked: v.optional(v.array(v.boolean())) }),
  },
  'confirmation.response': {
    kind: 'notification',
    params: v.object({ id: v.string(), decision: v.picklist(['allow', 'deny']), alwaysAllow: v.optional(v.boolean()) }),
  },
  ping: { kind: 'notification', params: v.optional(v.object({})) },
  /**
   * The page tools (WebMCP) one tab offers now: the whole list, sent once per change; an empty
   * list when the page unregistered them all, navigated, or the tab closed. The answer names the
   * tools the server refused (bad schema, name taken, over a cap) so the page can be told why;
   * `retryAfterMs` on a tool whose schema was not checked yet (the tab's budget for new schemas
   * was spent): the list is sent again after that long.
   */
  'pageTools.update': {
    kind: 'request',
    params: v.object({
      tabId: v.pipe(v.number(), v.integer()),
      url: v.string(),
      tools: v.array(v.object({ name: v.string(), description: v.string(), inputSchema: v.record(v.string(), v.unknown()), destructive: v.optional(v.literal(true)) })),
    }),
    result: v.object({ ok: v.literal(true), refused: v.array(v.object({ name: v.string(), reason: v.string(), retryAfterMs: v.optional(v.number()) })) }),
  },
  /**
   * A page tool running for call `dispatchId` asks for the user's input (requestUserInteraction):
   * a card in the side panel ("<origin> asks for your input during <tool>"), answered Continue or
   * Decline, or not within the approval timeout. `pageTools.interactionDone` takes the card away
   * once the call ended meanwhile.
   */
  'pageTools.interaction': {
    kind: 'request',
    params: v.object({ dispatchId: v.string(), tabId: v.pipe(v.number(), v.integer()), url: v.string(), origin: v.string(), tool: v.string() }),
    result: v.object({ answer: v.picklist(['continue', 'decline', 'timeout', 'ended']) }),
  },
  'pageTools.interactionDone': { kind: 'notification', params: v.object({ dispatchId: v.string() }) },
  /** Side panel: the permission of every page tool of one origin (e.g. "https://app.example.com"). */
  'config.setOriginPermission': {
    kind: 'request',
    params: v.object({ origin: v.string(), permission: Permission }),
    result: Ok,
  },
} as const;

export type ServerMethod = keyof typeof ServerToExtension;
export type ExtensionMethod = keyof typeof ExtensionToServer;

type ParamsOf<T> = T extends { params: infer S } ? (S extends v.GenericSchema ? v.InferOutput<S> : never) : never;
type ResultOf<T> = T extends { result: infer S } ? (S extends v.GenericSchema ? v.InferOutput<S> : never) : void;

export type ServerParams<M extends ServerMethod> = ParamsOf<(typeof ServerToExtension)[M]>;
export type ServerResult<M extends ServerMethod> = ResultOf<(typeof ServerToExtension)[M]>;
export type ExtensionParams<M extends ExtensionMethod> = ParamsOf<(typeof ExtensionToServer)[M]>;
export type ExtensionResult<M extends ExtensionMethod> = ResultOf<(typeof ExtensionToServer)[M]>;
