/**
 * `ask` permission: the server sends confirmation.request to the extension (side panel) and waits
 * for confirmation.response, at most ctx.limits.confirmationTimeoutMs. Pending confirmations
 * survive an extension reconnect (they are re-sent to the new connection), since the side panel
 * often reconnects while the user is deciding.
 */
import type { ServerContext } from '../context.ts';
import { fail } from '../tools/failures.ts';
import type { ExtensionHub } from './hub.ts';

export interface ConfirmationRequest {
  tool: string;
  plugin: string;
  params: unknown;
  signal?: AbortSignal;
}

export interface ConfirmationDecision {
  decision: 'allow' | 'deny';
  alwaysAllow?: boolean;
}

interface Pending {
  id: string;
  tool: string;
  plugin: string;
  params: unknown;
  expiresAt: number;
  settle(d: ConfirmationDecision | Error): void;
}

export class Confirmations {
  private pending = new Map<string, Pending>();

  constructor(
    private readonly ctx: ServerContext,
    private readonly hub: ExtensionHub,
  ) {}

  ask(req: ConfirmationRequest): Promise<ConfirmationDecision> {
    if (!this.hub.connected) return Promise.reject(fail.notConnected());
    if (req.signal?.aborted) return Promise.reject(fail.cancelled(req.tool, 'the client cancelled the request'));
    const timeoutMs = this.ctx.limits.confirmationTimeoutMs;
    const id = crypto.randomUUID();
    const expiresAt = Date.now() + timeoutMs;
    return new Promise<ConfirmationDecision>((resolve, reject) => {
      const onAbort = () => {
        this.hub.notify('confirmation.resolved', { id, outcome: 'cancelled' });
        entry.settle(fail.cancelled(req.tool, 'the client cancelled the request while it waited for approval'));
      };
      const timer = setTimeout(() => {
        this.hub.notify('confirmation.resolved', { id, outcome: 'timeout' });
        entry.settle(fail.approvalTimeout(req.tool, timeoutMs));
      }, timeoutMs);
      const entry: Pending = {
        id,
        tool: req.tool,
        plugin: req.plugin,
        params: req.params,
        expiresAt,
        settle: (d) => {
          if (!this.pending.delete(id)) return;
          clearTimeout(timer);
          req.signal?.removeEventListener('abort', onAbort);
          if (d instanceof Error) reject(d);
          else resolve(d);
        },
      };
      this.pending.set(id, entry);
      req.signal?.addEventListener('abort', onAbort, { once: true });
      this.hub.notify('confirmation.request', { id, tool: req.tool, plugin: req.plugin, params: req.params, expiresAt });
    });
  }

  /** confirmation.response from the extension. Unknown ids (already timed out) are ignored. */
  respond(id: string, decision: 'allow' | 'deny', alwaysAllow?: boolean): boolean {
    const p = this.pending.get(id);
    if (!p) return false;
    p.settle({ decision, alwaysAllow });
    return true;
  }

  list(): { id: string; tool: string; plugin: string; params: unknown; expiresAt: number }[] {
    return [...this.pending.values()].map(({ id, tool, plugin, params, expiresAt }) => ({ id, tool, plugin, params, expiresAt }));
  }

  resendPending(): void {
    for (const p of this.pending.values()) {
      this.hub.notify('confirmation.request', { id: p.id, tool: p.tool, plugin: p.plugin, params: p.params, expiresAt: p.expiresAt });
    }
  }

  cancelAll(reason: string): void {
    for (const p of [...this.pending.values()]) p.settle(fail.cancelled(p.tool, reason));
  }
}
