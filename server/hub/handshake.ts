/**
 * The server's half of the extension handshake (server/protocol/handshake.ts).
 *
 * A server nonce is self-authenticating: `<expiry>-<random>-<tag>` with tag = HMAC(process key,
 * expiry-random), the process key being random per server process. Issuing one therefore stores
 * nothing, so unauthenticated GET /ws-info requests cannot grow memory or push out the nonce the
 * real extension is about to answer. Single use is enforced by remembering answered nonces until
 * they expire; only a correct extension proof adds one, and the set is capped.
 */
import type { ServerContext } from '../context.ts';
import { HANDSHAKE_USED_NONCES_MAX } from '../limits.ts';
import { extensionProofMessage, hexEqual, hmacHex, randomHex, serverProofMessage, type WsInfoHandshake } from '../protocol/handshake.ts';

export type HandshakeCheck = { ok: true } | { ok: false; status: 401 | 503; message: string };

export class ServerHandshake {
  private readonly processKey = randomHex(32);
  /** Answered nonce → its expiry (ms). */
  private readonly used = new Map<string, number>();

  constructor(
    private readonly ttlMs: () => number,
    private readonly maxUsed = HANDSHAKE_USED_NONCES_MAX,
    private readonly now: () => number = Date.now,
  ) {}

  /** Answered nonces remembered right now (tests: issuing nonces must not grow this). */
  get usedCount(): number {
    return this.used.size;
  }

  async issueNonce(): Promise<string> {
    const head = `${(this.now() + this.ttlMs()).toString(16)}-${randomHex(16)}`;
    return `${head}-${await hmacHex(this.processKey, head)}`;
  }

  /** The /ws-info answer proving knowledge of `secret` for this client nonce. */
  async answer(secret: string, clientNonce: string, fields: { wsUrl: string; extensionConnected: boolean }): Promise<WsInfoHandshake> {
    const serverNonce = await this.issueNonce();
    const serverProof = await hmacHex(secret, serverProofMessage(clientNonce, serverNonce));
    return { wsUrl: fields.wsUrl, serverNonce, serverProof, extensionConnected: fields.extensionConnected };
  }

  /** Checks the extension's proof for a well-formed server nonce and consumes the nonce when it is right. */
  async verify(secret: string | null, serverNonce: string, proof: string): Promise<HandshakeCheck> {
    const [expiryHex, random, tag] = serverNonce.split('-');
    const head = `${expiryHex}-${random}`;
    if (!tag || !hexEqual(await hmacHex(this.processKey, head), tag)) {
      return { ok: false, status: 401, message: 'Unknown handshake nonce: it was not issued by this server (restarted?); ask GET /ws-info again' };
    }
    const now = this.now();
    const expiry = parseInt(expiryHex!, 16);
    if (!(expiry > now)) return { ok: false, status: 401, message: 'Expired handshake nonce: ask GET /ws-info again' };
    this.prune(now);
    if (this.used.has(serverNonce)) return { ok: false, status: 401, message: 'Handshake nonce already used: ask GET /ws-info again' };
    // Auth off (no secret configured): any well-formed, fresh nonce is accepted, like the bearer check.
    if (secret !== null && !hexEqual(await hmacHex(secret, extensionProofMessage(serverNonce)), proof)) {
      return { ok: false, status: 401, message: 'Invalid handshake proof: it does not match the server secret (rotated? the extension re-reads auth.json and retries)' };
    }
    // Re-checked after the awaits: two concurrent upgrades with the same nonce, only one wins.
    if (this.used.has(serverNonce)) return { ok: false, status: 401, message: 'Handshake nonce already used: ask GET /ws-info again' };
    if (this.used.size >= this.maxUsed) {
      return { ok: false, status: 503, message: `Too many extension handshakes in the last ${Math.round(this.ttlMs() / 1000)} s; retry shortly` };
    }
    this.used.set(serverNonce, expiry);
    return { ok: true };
  }

  private prune(now: number): void {
    for (const [nonce, expiry] of this.used) if (expiry <= now) this.used.delete(nonce);
  }
}

const byContext = new WeakMap<ServerContext, ServerHandshake>();

/** The handshake state of one server (created on first use; dies with the context). */
export function handshakeFor(ctx: ServerContext): ServerHandshake {
  let h = byContext.get(ctx);
  if (!h) {
    h = new ServerHandshake(() => ctx.limits.handshakeNonceTtlMs);
    byContext.set(ctx, h);
  }
  return h;
}
