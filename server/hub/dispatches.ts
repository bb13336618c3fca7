/**
 * Tool calls sent to the extension (tool.dispatch): correlation with the answer, the inactivity
 * timeout that each progress report restarts (never beyond the total cap), cancellation (client
 * abort, timeout → tool.cancel), the side panel's invocationStart/End while one is open, and the
 * routing of plugin log lines to the call that produced them.
 */
import { randomBytes } from 'node:crypto';
import * as v from 'valibot';
import type { OpenTabsError } from '../errors.ts';
import type { Limits } from '../limits.ts';
import { DISPATCH_ID_RANDOM_BYTES } from '../limits.ts';
import { notification as rpcNotification, request as rpcRequest } from '../protocol/jsonrpc.ts';
import { DispatchResult, type LogEntry, type ServerMethod, type ServerParams } from '../protocol/methods.ts';
import { fail, fromRpcError } from '../tools/call-errors.ts';
import type { DispatchRequest, Pending, RunningDispatch, Ws } from './types.ts';

/**
 * How many finished dispatches remember their MCP session, so log lines the extension flushes
 * after the result (it batches them) still reach the caller rather than every session.
 */
const RECENT_DISPATCH_SESSIONS = 256;

/** What the dispatcher needs of the hub's connection. */
export interface DispatchLink {
  /** The extension's socket now, or null. */
  socket(): Ws | null;
  nextRpcId(): number;
  /** Requests waiting for their answer, by JSON-RPC id (answers are matched by the hub). */
  readonly pending: Map<number, Pending>;
  notify<M extends ServerMethod>(method: M, params: ServerParams<M>): boolean;
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
    const ws = this.link.socket();
    if (!ws) return Promise.reject(fail.notConnected());
    if (req.signal?.aborted) return Promise.reject(fail.cancelled(req.fullName, 'the client cancelled the request'));

    const limits = this.link.limits();
    // Unguessable: a web page that could guess another call's id could try to write into it.
    const dispatchId = `d${randomBytes(DISPATCH_ID_RANDOM_BYTES).toString('hex')}`;
    const rpcId = this.link.nextRpcId();
    const startedAt = Date.now();
    const deadline = startedAt + limits.dispatchMaxTotalMs;

    return new Promise<DispatchResult>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      let settled = false;

      const finish = (err: OpenTabsError | null, value?: DispatchResult, cancelReason?: string) => {
        if (settled) return;
        settled = true;
        if (timer) clearTimeout(timer);
        this.link.pending.delete(rpcId);
        this.running.delete(dispatchId);
        this.remember(dispatchId, req.plugin, req.sessionId);
        req.signal?.removeEventListener('abort', onAbort);
        // Tell the extension to stop work we no longer wait for (only if it is still the same socket).
        if (cancelReason && this.link.socket() === ws) this.link.notify('tool.cancel', { dispatchId, reason: cancelReason });
        if (this.link.panelOpen()) {
          this.link.notify('tool.invocationEnd', {
            dispatchId,
            tool: req.fullName,
            plugin: req.plugin,
            success: err === null,
            durationMs: Date.now() - startedAt,
          });
        }
        if (err) reject(err);
        else resolve(value as DispatchResult);
      };

      const onTimeout = () => finish(fail.timeout(req.fullName, Date.now() - startedAt), undefined, 'timeout');
      const arm = () => {
        if (timer) clearTimeout(timer);
        const remaining = deadline - Date.now();
        timer = setTimeout(onTimeout, Math.max(0, Math.min(limits.dispatchTimeoutMs, remaining)));
      };
      const onAbort = () => finish(fail.cancelled(req.fullName, 'the client cancelled the request'), undefined, 'cancelled by client');

      this.link.pending.set(rpcId, {
        conn: ws,
        method: 'tool.dispatch',
        toolName: req.fullName,
        resolve: (x) => finish(null, x as DispatchResult),
        reject: (e) => finish(e),
        onResponse: (msg) => {
          if ('error' in msg) return finish(fromRpcError(msg.error, req.fullName));
          const parsed = v.safeParse(DispatchResult, msg.result);
          if (!parsed.success) return finish(fail.internal(`The extension returned a malformed result for ${req.fullName}: ${parsed.issues[0].message}`));
          finish(null, parsed.output);
        },
      });
      this.running.set(dispatchId, {
        dispatchId,
        plugin: req.plugin,
        rpcId,
        conn: ws,
        sessionId: req.sessionId,
        onProgress: req.onProgress,
        onLog: req.onLog,
        touch: arm,
      });
      req.signal?.addEventListener('abort', onAbort, { once: true });
      arm();

      const params: ServerParams<'tool.dispatch'> = { dispatchId, plugin: req.plugin, tool: req.wireName, input: req.input };
      if (req.tabId !== undefined) params.tabId = req.tabId;
      if (req.settings !== undefined) params.settings = req.settings;
      const start: ServerParams<'tool.invocationStart'> = { dispatchId, tool: req.fullName, plugin: req.plugin, ts: startedAt };
      // The side panel's invocationStart/End go out only while one is open (panel.state): with no
      // panel they would cost a frame each way per call for nobody.
      try {
        // The dispatch goes first so the side panel's invocationStart never delays the call
        // itself; cork() puts both frames in one socket write.
        if (this.link.panelOpen()) {
          ws.cork(() => {
            ws.send(rpcRequest(rpcId, 'tool.dispatch', params));
            ws.send(rpcNotification('tool.invocationStart', start));
          });
        } else ws.send(rpcRequest(rpcId, 'tool.dispatch', params));
      } catch (err) {
        finish(fail.disconnected());
      }
    });
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

  /** A `tool.progress` notification: restart the timeout (within the cap) and forward it. */
  onProgress(p: { dispatchId: string; progress: number; total?: number; message?: string }): void {
    const d = this.running.get(p.dispatchId);
    if (!d) return;
    d.touch();
    try {
      d.onProgress?.({ progress: p.progress, total: p.total, message: p.message });
    } catch {}
  }
}
