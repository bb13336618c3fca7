/**
 * The extension's mutual-proof handshake, shared by the server and the extension worker (WebCrypto
 * `crypto.subtle` only, so it runs in both). The secret itself never crosses the wire: whoever
 * listens on the configured port may be a squatter, so each side proves knowledge of the secret
 * with an HMAC over a nonce the other side chose.
 *
 *   1. GET /ws-info with header `X-OpenTabs-Client-Nonce: <32 hex>` (no Authorization).
 *      The server answers { wsUrl, serverNonce, serverProof, extensionConnected } with
 *      serverProof = HMAC-SHA256(secret, serverProofMessage(clientNonce, serverNonce)).
 *   2. The extension checks serverProof BEFORE computing anything else from the secret; a wrong
 *      proof ends the attempt (the process on the port is not the OpenTabs server).
 *   3. It opens ws://127.0.0.1:<configured port>/ws (never the URL from the answer) offering the
 *      subprotocols ['opentabs', hmacSubprotocol(serverNonce, HMAC(secret, extensionProofMessage(serverNonce)))].
 *      The server accepts a nonce it issued, unexpired, once, and answers the subprotocol 'opentabs'.
 *
 * The two messages carry different prefixes, so a proof of one kind is never valid as the other.
 */

export const WS_SUBPROTOCOL = 'opentabs';
/** Request header carrying the extension's fresh nonce on GET /ws-info. */
export const CLIENT_NONCE_HEADER = 'X-OpenTabs-Client-Nonce';
/**
 * Header a browser sends on its GET /ws-info while another browser's extension holds the server
 * and it waits to take over (`1`). The server only counts such browsers for /health (status,
 * doctor): the request is unauthenticated, and nothing else depends on it.
 */
export const WAITING_HEADER = 'X-OpenTabs-Waiting';
/** Second subprotocol the extension offers on /ws: `opentabs-hmac.<serverNonce>.<proof>`. */
export const HMAC_SUBPROTOCOL_PREFIX = 'opentabs-hmac.';

/** 16 random bytes, lower-case hex. */
export const CLIENT_NONCE_RE = /^[0-9a-f]{32}$/;
/** `<expiry ms, hex>-<16 random bytes, hex>-<server tag, 32 bytes hex>`; opaque to the extension. */
export const SERVER_NONCE_RE = /^[0-9a-f]{1,16}-[0-9a-f]{32}-[0-9a-f]{64}$/;
/** An HMAC-SHA256 in lower-case hex. */
export const PROOF_RE = /^[0-9a-f]{64}$/;

/** GET /ws-info answer to a request carrying CLIENT_NONCE_HEADER. */
export interface WsInfoHandshake {
  /** Informational only: the extension builds the URL from its configured port. */
  wsUrl: string;
  serverNonce: string;
  serverProof: string;
  /** Whether an extension holds the server's WebSocket (a replaced extension waits while true). */
  extensionConnected: boolean;
}

export const serverProofMessage = (clientNonce: string, serverNonce: string): string => `opentabs-server|${clientNonce}|${serverNonce}`;
export const extensionProofMessage = (serverNonce: string): string => `opentabs-extension|${serverNonce}`;

/** Byte → two hex digits, made on first use: building it costs ≈ 0.8 ms cold, which every server start paid. */
let hexTable: string[] | undefined;
function toHex(bytes: Uint8Array): string {
  if (!hexTable) {
    hexTable = [];
    for (let i = 0; i < 256; i++) hexTable.push((i < 16 ? '0' : '') + i.toString(16));
  }
  let s = '';
  for (const b of bytes) s += hexTable[b];
  return s;
}

/**
 * `bytes` random bytes from the Web Crypto CSPRNG, as hex: nonces, keys and the secret (not
 * node:crypto's randomBytes, whose module costs ≈ 10 ms to load).
 */
export function randomHex(bytes: number): string {
  return toHex(crypto.getRandomValues(new Uint8Array(bytes)));
}

const encoder = new TextEncoder();
/** The last imported key: the secret changes only on rotation, so one import serves every handshake. */
let cachedKey: { secret: string; key: Promise<CryptoKey> } | null = null;
function hmacKey(secret: string): Promise<CryptoKey> {
  if (cachedKey?.secret !== secret) {
    cachedKey = { secret, key: crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']) };
  }
  return cachedKey.key;
}

/** HMAC-SHA256(key = UTF-8 of `secret`, UTF-8 of `message`) as lower-case hex. */
export async function hmacHex(secret: string, message: string): Promise<string> {
  if (secret.length === 0) throw new Error('HMAC needs a non-empty secret');
  return toHex(new Uint8Array(await crypto.subtle.sign('HMAC', await hmacKey(secret), encoder.encode(message))));
}

/** Equality whose time depends only on the lengths (both are fixed-length hex here). */
export function hexEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Step 2 for a client: whether a GET /ws-info answer (parsed JSON) proves knowledge of `secret` for
 * the client nonce it sent. `why` completes "the process on the port …".
 */
export async function checkServerProof(
  secret: string,
  clientNonce: string,
  answer: unknown,
): Promise<{ ok: true; serverNonce: string; extensionConnected: boolean } | { ok: false; why: string }> {
  const { serverNonce, serverProof, extensionConnected } = (typeof answer === 'object' && answer !== null ? answer : {}) as Partial<Record<keyof WsInfoHandshake, unknown>>;
  if (typeof serverNonce !== 'string' || !SERVER_NONCE_RE.test(serverNonce) || typeof serverProof !== 'string' || !PROOF_RE.test(serverProof)) {
    return { ok: false, why: 'answered GET /ws-info without a well-formed proof that it knows the secret' };
  }
  if (!hexEqual(await hmacHex(secret, serverProofMessage(clientNonce, serverNonce)), serverProof)) return { ok: false, why: 'could not prove it knows the secret' };
  return { ok: true, serverNonce, extensionConnected: extensionConnected === true };
}

export function hmacSubprotocol(serverNonce: string, proof: string): string {
  return `${HMAC_SUBPROTOCOL_PREFIX}${serverNonce}.${proof}`;
}

/** The nonce and proof of an `opentabs-hmac.` subprotocol token, or null when it is not well formed. */
export function parseHmacSubprotocol(token: string): { serverNonce: string; proof: string } | null {
  if (!token.startsWith(HMAC_SUBPROTOCOL_PREFIX)) return null;
  const [serverNonce, proof, ...rest] = token.slice(HMAC_SUBPROTOCOL_PREFIX.length).split('.');
  if (rest.length > 0 || !serverNonce || !proof || !SERVER_NONCE_RE.test(serverNonce) || !PROOF_RE.test(proof)) return null;
  return { serverNonce, proof };
}
