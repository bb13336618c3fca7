/**
 * Secrets never reach a draft: values under keys that name a credential and strings that look like
 * one are replaced before anything is written, by the rule the side panel's activity list masks
 * with too (server/protocol/secret-values.ts). Cookie, Authorization and CSRF header values are
 * never read into the draft at all (operations.ts keeps header names only).
 */
import { looksSecret, maskSecrets } from '../../../server/protocol/secret-values.ts';

export { looksSecret };
export const REDACTED = '<redacted>';

export function redact(value: unknown, key = ''): unknown {
  return maskSecrets(value, REDACTED, key);
}

const NAME_START = /[_A-Za-z]/;
const NAME_CHAR = /[_0-9A-Za-z]/;

/**
 * A GraphQL document with the string literals written into it that look like secrets replaced by
 * "<redacted>": a frontend may write a password or a token into the query text itself
 * (`mutation { login(password: "…") }`, `query ($key: String = "…")`) instead of passing it as a
 * variable, and the query text becomes the drafted tool's code. A literal counts by the argument,
 * field or variable name it is given to (also inside a list: `keys: ["…"]`) or by how it looks.
 * Comments, which may hold anything, are dropped.
 */
export function redactGraphqlQuery(query: string): string {
  let out = '';
  let key = '';
  let i = 0;
  const n = query.length;
  while (i < n) {
    const c = query[i]!;
    if (c === '#') {
      while (i < n && query[i] !== '\n' && query[i] !== '\r') i++;
      continue;
    }
    if (c === '"') {
      const block = query.startsWith('"""', i);
      let j = i + (block ? 3 : 1);
      let value = '';
      for (;;) {
        if (j >= n) break;
        if (block) {
          if (query.startsWith('\\"""', j)) {
            value += '"""';
            j += 4;
            continue;
          }
          if (query.startsWith('"""', j)) {
            j += 3;
            break;
          }
          value += query[j++];
          continue;
        }
        const d = query[j]!;
        if (d === '\\') {
          value += query.slice(j, j + 2);
          j += 2;
          continue;
        }
        j++;
        if (d === '"') break;
        value += d;
      }
      let text = value;
      if (!block) {
        try {
          text = JSON.parse(`"${value}"`) as string;
        } catch {}
      }
      out += looksSecret(key, text) ? JSON.stringify(REDACTED) : query.slice(i, j);
      i = j;
      continue;
    }
    if (NAME_START.test(c)) {
      let j = i + 1;
      while (j < n && NAME_CHAR.test(query[j]!)) j++;
      const name = query.slice(i, j);
      let k = j;
      while (k < n && /[\s,]/.test(query[k]!)) k++;
      if (query[k] === ':') key = name;
      out += name;
      i = j;
      continue;
    }
    // A new selection, argument list or object: the name a literal belongs to comes again.
    if (c === '(' || c === ')' || c === '{' || c === '}') key = '';
    out += c;
    i++;
  }
  return out;
}
