/**
 * The bearer secret this extension last read from auth.json to connect (connection.ts). Tool
 * results are scrubbed of it (tools/run.ts) on every call, so it is kept in memory rather than
 * fetched per call; a call only arrives over a connection made with the secret read here.
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
