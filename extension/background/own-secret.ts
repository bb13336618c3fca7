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
 * The frame's JSON text with the secret replaced. It is 64 hex digits, which JSON writes
 * unescaped, so replacing it in the text is exact and keeps the JSON valid.
 */
export function withoutSecret(text: string): string {
  return known !== null && text.includes(known) ? text.split(known).join(REDACTED_SECRET) : text;
}
