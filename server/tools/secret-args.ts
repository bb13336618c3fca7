/**
 * A call's failure is recorded in audit.log (and `opentabs audit`, GET /audit) with its error
 * message, and messages may quote the arguments: a plugin's input check in its page says
 * `otp: Invalid format: Expected /^\d{6}$/ but received "492817"`, a plugin's own error may
 * repeat what it was given. The values of arguments that look like secrets (by their key or their
 * form, protocol/secret-values.ts: the rule the side panel's activity list masks by) are masked in
 * what is recorded.
 */
import { SECRET_MASK, looksSecret } from '../protocol/secret-values.ts';
import { TOOL_ARGS_MAX_DEPTH } from '../limits.ts';

/** Shorter values are not looked for: "1" or "ab" would mask every such run of a message. */
const MIN_CHARS = 3;
/** Argument values looked at, at most, and the longest looked for: the work is bounded whatever a caller sends. */
const MAX_VALUES = 1_000;
const MAX_VALUE_CHARS = 16 * 1024;

/** The string values (and numbers, as written) of `args` that look like secrets, longest first. */
export function secretArgValues(args: unknown): string[] {
  const found = new Set<string>();
  let seen = 0;
  const visit = (value: unknown, key: string, depth: number): void => {
    if (++seen > MAX_VALUES || depth > TOOL_ARGS_MAX_DEPTH) return;
    if (Array.isArray(value)) {
      for (const v of value) visit(v, key, depth + 1);
      return;
    }
    if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) visit(v, k, depth + 1);
      return;
    }
    if (typeof value !== 'string' && typeof value !== 'number') return;
    const text = String(value);
    if (text.length < MIN_CHARS || text.length > MAX_VALUE_CHARS || !looksSecret(key, typeof value === 'number' ? text : value)) return;
    found.add(text);
    // As JSON quotes it inside a message ("received \"a\\\"b\"").
    const quoted = JSON.stringify(text).slice(1, -1);
    if (quoted !== text) found.add(quoted);
  };
  visit(args, '', 0);
  return [...found].sort((a, b) => b.length - a.length);
}

/**
 * `text` with every occurrence of each of `values` (longest first) replaced by SECRET_MASK. Only
 * its first `keep` characters are to be kept: what follows them is dropped first, except as much
 * as a value starting within them may run past them, so none is kept in part.
 */
export function maskValues(text: string, values: readonly string[], keep: number): string {
  if (values.length === 0) return text;
  // One character more than can be kept, so that a text cut here is still cut (and said to be) where it is recorded.
  const upTo = keep + values[0]!.length + 1;
  let out = text.length > upTo ? text.slice(0, upTo) : text;
  for (const v of values) if (out.includes(v)) out = out.split(v).join(SECRET_MASK);
  return out;
}
