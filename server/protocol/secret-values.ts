/**
 * Which values are secrets, wherever arguments or recorded requests are shown or written: the
 * side panel's activity list (extension/background/activity.ts) and plugin drafts
 * (plugins/tooling/draft/redact.ts) mask by this one rule.
 *
 * A value is a secret when its key names a credential (a password, a token, a PIN, a one-time or
 * card security code, a card or account number), or when the string itself looks like one (a JWT,
 * a long random token, of letters and digits or of random letters only, a card number with a
 * right check digit, a social security number).
 */
const SECRET_KEY = /pass(word)?|secret|token|session|auth|api[-_]?key|csrf|xsrf|cookie|credential|signature/i;
const JWT = /^eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}$/;
/** Long strings of letters and digits mixed, no spaces: API keys, session ids, signed tokens. */
const OPAQUE = /^(?=.*[0-9])(?=.*[A-Za-z])[A-Za-z0-9+/=_\-.]{24,}$/;
/** No digit, no space, 32 characters or more: a token drawn from letters only, or words run together. */
const LETTERS_ONLY = /^[A-Za-z+/=_\-.]{32,}$/;

/**
 * Whether a LETTERS_ONLY value reads as random letters rather than words run together (a long
 * slug, a camelCase or snake_case name): fewer than a quarter of its letters are vowels (a, e, i,
 * o, u: about a fifth of random letters, nearer two fifths of English), or one of its words (cut
 * at separators, at a lower-case letter followed by a capital, and before the last capital of an
 * acronym) holds six consonants in a row (y counts as a vowel there), or it mixes cases jumping
 * back to a capital at once (two capitals in a row, or one lower-case letter between two) at
 * least once every four letters. Measured on random values of 32 letters, about 4 in 100
 * mixed-case and 7 in 100 single-case ones pass as words (of 64 letters, fewer than 2 in 100);
 * English words run together with separators or in camelCase are not masked, lower-case words
 * run together with no separator in about 2 of 100.
 */
function randomLetters(value: string): boolean {
  const letters = value.replace(/[^A-Za-z]/g, '');
  if (letters.length < 32) return false;
  const vowels = letters.match(/[aeiou]/gi)?.length ?? 0;
  if (vowels * 4 < letters.length) return true;
  const words = value.replace(/([a-z])(?=[A-Z])|([A-Z])(?=[A-Z][a-z])/g, '$1$2 ').toLowerCase().split(/[^a-z]+/);
  if (words.some((w) => /[^aeiouy]{6}/.test(w))) return true;
  // Random mixed case: two capitals in a row, or one lower-case letter between two capitals, often.
  const caseJumps = (letters.match(/[A-Z](?=[A-Z])/g)?.length ?? 0) + (letters.match(/[A-Z][a-z](?=[A-Z])/g)?.length ?? 0);
  return /[a-z]/.test(letters) && caseJumps * 4 >= letters.length;
}

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

/** What stands for a secret value where it is shown or recorded (side panel activity, audit messages). */
export const SECRET_MASK = '•••';

/** True when `value`, found under `key` ('' for none), is to be masked. */
export function looksSecret(key: string, value: unknown): boolean {
  if (SECRET_KEY.test(key) || secretKeyWords(key)) return true;
  if (typeof value !== 'string') return false;
  if (JWT.test(value) || OPAQUE.test(value) || SSN.test(value)) return true;
  if (LETTERS_ONLY.test(value) && randomLetters(value)) return true;
  return CARD_NUMBER.test(value) && luhn(value.replace(/[ -]/g, ''));
}

/**
 * A copy of a JSON value with every secret leaf (looksSecret) replaced by `mask`. An array's items
 * count as under the array's key (`pins: ["1234"]`); an object's values under their own keys.
 */
export function maskSecrets(value: unknown, mask: string, key = ''): unknown {
  if (Array.isArray(value)) return value.map((v) => maskSecrets(v, mask, key));
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskSecrets(v, mask, k)]));
  return looksSecret(key, value) ? mask : value;
}
