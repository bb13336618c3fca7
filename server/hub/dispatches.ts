/**
 * Tool calls sent to the extension (tool.dispatch) over the connection's RPC peer
 * (server/protocol/rpc-peer.ts), which owns correlation, the inactivity timeout that each
 * progress report restarts (never beyond the total cap) and cancellation (client abort or timeout
 * → tool.cancel). This file adds what is particular to tool calls: the side panel's
 * invocationStart/End while one is open, progress forwarding and the routing of plugin log lines
 * to the call that produced them.
 */
import type { Limits } from '../limits.ts';
import type { DispatchResult, LogEntry, ServerParams } from '../protocol/methods.ts';
import { fail } from '../tools/call-errors.ts';
import type { DispatchRequest, ExtensionPeer, RunningDispatch, ServerNotification } from './types.ts';

/**
 * How many finished dispatches remember their MCP session, so log lines the extension flushes
 * after the result (it batches them) still reach the caller rather than every session.
 */
const RECENT_DISPATCH_SESSIONS = 256;

/** What the dispatcher needs of the hub's connection. */
export interface DispatchLink {
  /** The extension connection's peer now, or null. */
  peer(): ExtensionPeer | null;
  notify<M extends ServerNotification>(method: M, params: ServerParams<M>): boolean;
  /** A side panel is open (it gets invocationStart/End). */
  panelOpen(): boolean;
  limits(): Limits;
}

export class Dispatches {
  private running = new Map<string, RunningDispatch>();
  /** dispatchId → plugin and MCP session of recently finished dispatches (insertion-ordered, bounded). */
  private recent = new Map<string, { plugin: string; sessionId: string | undefined }>();
  /** Plugin log lines for MCP sessions: (entry, the calling session or undefined for every session). */
  private logListeners = new Set<(entry: LogEntry, sessionId: string | undefined) => void>();
  /**
   * MCP session id → the id tool.dispatch names it by (`session`), for sessions that made a
   * built-in call: session.ended goes out for these only, and the entry goes with the session.
   * Stateless MCP requests (modern.ts) all come from one caller id that never ends: what they
   * change stays as a REST call's does.
   */
  private sessionNames = new Map<string, string>();

  constructor(private readonly link: DispatchLink) {}

  onPluginLog(cb: (entry: LogEntry, sessionId: string | undefined) => void): () => void {
    this.logListeners.add(cb);
    return () => this.logListeners.delete(cb);
  }

  private emitLog(entry: LogEntry, sessionId?: string): void {
    for (const cb of this.logListeners) {
      try {
        cb(entry, sessionId);
      } catch {}
    }
  }

  dispatch(req: DispatchRequest): Promise<DispatchResult> {
    const peer = this.link.peer();
    if (!peer) return Promise.reject(fail.notConnected());
    if (req.signal?.aborted) return Promise.reject(fail.cancelled(req.fullName, 'the client cancelled the request'));

    const limits = this.link.limits();
    // Unguessable: a web page that could guess another call's id could try to write into it.
    // A v4 UUID's 122 random bits as 32 hex digits (no Buffer per call, unlike randomBytes).
    const dispatchId = `d${crypto.randomUUID().replaceAll('-', '')}`;
    const startedAt = Date.now();
    const params: ServerParams<'tool.dispatch'> = { dispatchId, plugin: req.plugin, tool: req.wireName, input: req.input };
    if (req.tabId !== undefined) params.tabId = req.tabId;
    if (req.settings !== undefined) params.settings = req.settings;
    if (req.approvedUrl !== undefined) params.approvedUrl = req.approvedUrl;
    if (req.approvedTabs !== undefined) params.approvedTabs = req.approvedTabs;
    // Built-in tools may change the user's tab beyond the call (emulation, interception, forced
    // states): the extension remembers the session they came from, under an id of its own.
    if (req.sessionId !== undefined && req.plugin === 'browser') params.session = this.sessionName(req.sessionId);
    this.running.set(dispatchId, { dispatchId, plugin: req.plugin, sessionId: req.sessionId, onProgress: req.onProgress, onLog: req.onLog });

    let call!: Promise<DispatchResult>;
    const send = () => {
      params.sentAt = Date.now();
      call = peer.request('tool.dispatch', params, {
        timeoutMs: limits.dispatchTimeoutMs,
        maxTotalMs: limits.dispatchMaxTotalMs,
        progressToken: dispatchId,
        signal: req.signal,
        cancel: { method: 'tool.cancel', params: (why) => ({ dispatchId, reason: why === 'timeout' ? 'timeout' : 'cancelled by client' }) },
        label: req.fullName,
        validateResult: true,
      });
    };
    // The side panel's invocationStart/End go out only while one is open (panel.state): with no
    // panel they would cost a frame each way per call for nobody. The dispatch goes first so the
    // side panel's invocationStart never delays the call itself; one socket write carries both.
    if (this.link.panelOpen()) {
      peer.batch(() => {
        send();
        this.link.notify('tool.invocationStart', { dispatchId, tool: req.fullName, plugin: req.plugin, ts: startedAt });
      });
    } else send();

    const end = (success: boolean) => {
      this.running.delete(dispatchId);
      this.remember(dispatchId, req.plugin, req.sessionId);
      if (this.link.panelOpen()) {
        this.link.notify('tool.invocationEnd', { dispatchId, tool: req.fullName, plugin: req.plugin, success, durationMs: Date.now() - startedAt });
      }
    };
    return call.then(
      (value) => (end(true), value),
      (err: unknown) => {
        end(false);
        throw err;
      },
    );
  }

  private sessionName(sessionId: string): string {
    let name = this.sessionNames.get(sessionId);
    if (name === undefined) {
      name = `s${crypto.randomUUID().replaceAll('-', '')}`;
      this.sessionNames.set(sessionId, name);
    }
    return name;
  }

  /**
   * An MCP session ended: when it made built-in calls, the extension is told (session.ended) so
   * that what only that session changed on the user's tabs ends with it. Not connected: nothing
   * to tell (the extension ended every such change when it lost the server).
   */
  sessionEnded(sessionId: string): void {
    const name = this.sessionNames.get(sessionId);
    if (name === undefined) return;
    this.sessionNames.delete(sessionId);
    this.link.notify('session.ended', { session: name });
  }

  private remember(dispatchId: string, plugin: string, sessionId: string | undefined): void {
    if (this.recent.size >= RECENT_DISPATCH_SESSIONS) {
      const oldest = this.recent.keys().next().value;
      if (oldest !== undefined) this.recent.delete(oldest);
    }
    this.recent.set(dispatchId, { plugin, sessionId });
  }

  /**
   * Route a plugin log line: to the call that produced it when that call is still running (its
   * MCP session gets it on the request's stream); a line for a call that already ended goes to
   * that call's session only; a line from no MCP call (none named, or a REST call) goes to every
   * MCP session.
   *
   * A line that names a dispatch must be of that dispatch's plugin, and the dispatch must be one
   * the hub knows (running or among the recent ones); otherwise it reaches no session (it stays
   * in the plugin's log buffer): it would otherwise land in a stranger's call stream, or in every
   * session.
   */
  routeLog(entry: LogEntry): void {
    if (!entry.dispatchId) {
      this.emitLog(entry);
      return;
    }
    const d = this.running.get(entry.dispatchId);
    if (d) {
      if (d.plugin !== entry.plugin) return;
      if (d.onLog) {
        try {
          d.onLog(entry);
        } catch {}
        return;
      }
      this.emitLog(entry, d.sessionId);
      return;
    }
    const recent = this.recent.get(entry.dispatchId);
    if (recent?.plugin === entry.plugin) this.emitLog(entry, recent.sessionId);
  }

  get count(): number {
    return this.running.size;
  }

  /** A `tool.progress` notification (the peer already restarted the call's timeout): forward it. */
  onProgress(p: { dispatchId: string; progress: number; total?: number; message?: string }): void {
    const d = this.running.get(p.dispatchId);
    if (!d) return;
    try {
      d.onProgress?.({ progress: p.progress, total: p.total, message: p.message });
    } catch {}
  }
}
