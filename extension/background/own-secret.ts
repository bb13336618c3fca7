/**
 * The bearer secret this extension last read from auth.json to connect (connection.ts), and the
 * scrub every frame to the server goes through: no tool result, error, progress or log line — a
 * built-in's or a plugin's — may carry it, whatever page or file it was read from (a page showing
 * an MCP client's config, a script returning it). The secret itself never travels in a frame (the
 * handshake proves it with an HMAC), so replacing it there loses nothing.
 */
let known: string | null = null;

/** Secrets shorter than this are not ones `opentabs start` writes (64 hex digits); not scrubbed. */
const MIN_SECRET_CHARS = 16;

export function rememberSecret(secret: unknown): void {
  known = typeof secret === 'string' && secret.length >= MIN_SECRET_CHARS ? secret : null;
}

export function knownSecret(): string | null {
  return known;
}

/** What stands in a frame for the secret. */
export const REDACTED_SECRET = '[redacted: opentabs secret]';

/**
 * Runs of this many characters of the secret or more are replaced wherever they appear. Tools
 * that cut what they read let the caller choose the cut (browser_get_tab_content's maxLength
 * ending inside the secret returned 63 of its 64 digits): a piece is as good as the whole. 16 hex
 * digits of 64 leave 192 bits unknown; a chance run of 16 digits of it is not a real risk (about
 * 49 in 16^16 per position).
 */
export const SECRET_PIECE_CHARS = 16;

const HEX_SECRET = /^[0-9a-f]+$/;
/** Runs of hex digits long enough to hold a piece (case-insensitive: a page may show it upper-cased). */
const HEX_RUN = /[0-9a-fA-F]{16,}/g;

let pieces: { secret: string; windows: Set<string>; blocks: RegExp } | null = null;

/**
 * Every SECRET_PIECE_CHARS-long window of the secret (49 of them), and a search for its aligned
 * blocks of half that length, made once per secret. Any window holds one whole block (a window
 * starting at i holds the block starting at the next multiple of 8, at most i + 7, ending at most
 * at i + 14): a text in which no block occurs, in any case, holds no piece, and one native search
 * for 8 short strings tells it (a megabyte result costs a fraction of running HEX_RUN over it).
 */
function piecesOf(secret: string): { windows: Set<string>; blocks: RegExp } {
  if (pieces?.secret !== secret) {
    const windows = new Set<string>();
    for (let i = 0; i + SECRET_PIECE_CHARS <= secret.length; i++) windows.add(secret.slice(i, i + SECRET_PIECE_CHARS));
    const half = SECRET_PIECE_CHARS / 2;
    const blocks: string[] = [];
    for (let b = 0; b + half <= secret.length; b += half) blocks.push(secret.slice(b, b + half));
    pieces = { secret, windows, blocks: new RegExp(blocks.join('|'), 'i') };
  }
  return pieces;
}

function windowsOf(secret: string): Set<string> {
  return piecesOf(secret).windows;
}

/** False when `text` cannot hold a piece of the hex `secret` (no block of it occurs); true when it may. */
function mayHoldPiece(text: string, secret: string): boolean {
  return piecesOf(secret).blocks.test(text);
}

/** A run of hex digits with every piece of the secret in it replaced (overlapping pieces by one mark). */
function scrubRun(run: string, secret: string): string {
  const lower = run.toLowerCase();
  // Where each window of the secret occurs (native searches: a long run of hex costs little).
  const spans: [number, number][] = [];
  for (const w of windowsOf(secret)) {
    for (let j = lower.indexOf(w); j >= 0; j = lower.indexOf(w, j + 1)) spans.push([j, j + SECRET_PIECE_CHARS]);
  }
  if (spans.length === 0) return run;
  spans.sort((a, b) => a[0] - b[0]);
  let out = '';
  let last = 0;
  let k = 0;
  while (k < spans.length) {
    const start = spans[k]![0];
    let end = spans[k]![1];
    for (k++; k < spans.length && spans[k]![0] <= end; k++) end = Math.max(end, spans[k]![1]);
    out += run.slice(last, start) + REDACTED_SECRET;
    last = end;
  }
  return out + run.slice(last);
}

/**
 * The frame's JSON text with the secret, and every run of SECRET_PIECE_CHARS or more of its
 * characters, replaced. `opentabs start` writes 64 lower-case hex digits, which JSON writes
 * unescaped, so replacing them in the text is exact and keeps the JSON valid. A secret of another
 * form (set by hand) is replaced where it appears whole.
 */
export function withoutSecret(text: string): string {
  if (known === null) return text;
  const secret = known;
  if (!HEX_SECRET.test(secret)) return text.includes(secret) ? text.split(secret).join(REDACTED_SECRET) : text;
  if (!mayHoldPiece(text, secret)) return text;
  return text.replace(HEX_RUN, (run) => scrubRun(run, secret));
}

/**
 * Whether `text` holds the secret or a run of SECRET_PIECE_CHARS or more of its characters (in
 * either case, for the hex secrets `opentabs start` writes). For what the scrub above cannot
 * replace: an image or a PDF of a page showing it, bytes a tool returns as base64.
 */
export function holdsSecretPiece(text: string): boolean {
  if (known === null) return false;
  const secret = known;
  if (!HEX_SECRET.test(secret)) return text.includes(secret);
  if (!mayHoldPiece(text, secret)) return false;
  for (const run of text.match(HEX_RUN) ?? []) if (scrubRun(run, secret) !== run) return true;
  return false;
}

/** Whether the bytes `b64` encodes hold a piece of the secret (false when it is not base64). */
export function base64HoldsSecret(b64: string): boolean {
  if (known === null) return false;
  let bytes: string;
  try {
    bytes = atob(b64);
  } catch {
    return false;
  }
  return holdsSecretPiece(bytes);
}
