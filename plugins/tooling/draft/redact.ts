/**
 * Secrets never reach a draft: values under keys that name a credential, and strings that look
 * like one (JWTs, long random tokens), are replaced before anything is written. Cookie,
 * Authorization and CSRF header values are never read into the draft at all (operations.ts keeps
 * header names only).
 */
const SECRET_KEY = /pass(word)?|secret|token|session|auth|api[-_]?key|csrf|xsrf|cookie|credential|signature/i;
const JWT = /^eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}$/;
/** Long strings of letters and digits mixed, no spaces: API keys, session ids, signed tokens. */
const OPAQUE = /^(?=.*[0-9])(?=.*[A-Za-z])[A-Za-z0-9+/=_\-.]{24,}$/;
export const REDACTED = '<redacted>';

export function looksSecret(key: string, value: unknown): boolean {
  if (SECRET_KEY.test(key)) return true;
  return typeof value === 'string' && (JWT.test(value) || OPAQUE.test(value));
}

export function redact(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((v) => redact(v, key));
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v, k)]));
  return looksSecret(key, value) ? REDACTED : value;
}
