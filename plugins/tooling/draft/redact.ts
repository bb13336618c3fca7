/**
 * Secrets never reach a draft: values under keys that name a credential (a password, a token, a
 * PIN, a one-time or card security code, a card or account number), and strings that look like
 * one (JWTs, long random tokens, card numbers, social security numbers), are replaced before
 * anything is written. Cookie,
 * Authorization and CSRF header values are never read into the draft at all (operations.ts keeps
 * header names only).
 */
const SECRET_KEY = /pass(word)?|secret|token|session|auth|api[-_]?key|csrf|xsrf|cookie|credential|signature/i;
const JWT = /^eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}$/;
/** Long strings of letters and digits mixed, no spaces: API keys, session ids, signed tokens. */
const OPAQUE = /^(?=.*[0-9])(?=.*[A-Za-z])[A-Za-z0-9+/=_\-.]{24,}$/;
export const REDACTED = '<redacted>';

/**
 * Words of a key (camelCase, snake_case, kebab-case split, lower case) that name a credential the
 * key patterns above miss: a PIN, a one-time or card security code, a card or account number.
 * Whole words only ("pin" is no "shipping"); two-word names are matched joined ("cardnumber").
 */
const SECRET_WORDS = new Set(['pin', 'otp', 'totp', 'hotp', 'mfa', '2fa', 'cvv', 'cvv2', 'cvc', 'cvc2', 'csc', 'ssn', 'passcode', 'passphrase', 'iban']);
const SECRET_PAIRS = new Set(['cardnumber', 'ccnumber', 'ccnum', 'creditcard', 'securitycode', 'verificationcode', 'onetime', 'accountnumber', 'routingnumber', 'socialsecurity', 'mfacode', 'smscode']);
/** A card number: 13 to 19 digits, spaces or dashes between groups, its Luhn check digit right. */
const CARD_NUMBER = /^\d(?:[ -]?\d){12,18}$/;
/** A US social security number as written. */
const SSN = /^\d{3}-\d{2}-\d{4}$/;

function keyWords(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== '');
}

function secretKeyWords(key: string): boolean {
  const words = keyWords(key);
  if (words.some((w) => SECRET_WORDS.has(w) || SECRET_PAIRS.has(w))) return true;
  for (let i = 0; i + 1 < words.length; i++) if (SECRET_PAIRS.has(words[i]! + words[i + 1]!)) return true;
  return false;
}

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

export function looksSecret(key: string, value: unknown): boolean {
  if (SECRET_KEY.test(key) || secretKeyWords(key)) return true;
  if (typeof value !== 'string') return false;
  if (JWT.test(value) || OPAQUE.test(value) || SSN.test(value)) return true;
  return CARD_NUMBER.test(value) && luhn(value.replace(/[ -]/g, ''));
}

export function redact(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((v) => redact(v, key));
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v, k)]));
  return looksSecret(key, value) ? REDACTED : value;
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
