/**
 * browser_intercept_requests acts on http and https requests only: never another extension's
 * resources (`chrome-extension://…`), OpenTabs' own, `file://` files, `data:` or `blob:` URLs. A
 * Fetch urlPattern `*` matches any scheme, and Chrome pauses some such requests (file:// documents:
 * a local page's frames and navigations); a block or fail rule stopped them. Which schemes Chrome
 * pauses is Chrome's to change, so both ends are closed: a pattern that names another scheme is
 * refused where the call comes in (the server, before anyone is asked, and the extension), and the
 * extension lets every paused request whose URL is not http(s) go on untouched, whatever pattern
 * matched it.
 */
import { wildcardMatch } from './wildcard.ts';

/** Whether `url` is an http or https URL (the only requests interception acts on). */
export function isHttpUrl(url: string): boolean {
  const u = url.slice(0, 8).toLowerCase();
  return u.startsWith('http://') || u.startsWith('https://');
}

/** Characters of a URL scheme, and the pattern's wildcards. */
const SCHEME_OR_WILDCARD = /^[A-Za-z0-9+.\-*?]+$/;

/**
 * The scheme `pattern` (a Fetch urlPattern: `*` any run of characters, `?` one character) names
 * when it is not http or https, as written in the pattern; null when the pattern can only mean
 * http(s) requests or leaves the scheme to a wildcard (`*`, `*://…`, `http*://…`).
 *
 * A pattern that begins with text begins with its scheme (a URL does): the text before its first
 * `:` must be http or https, and text with no `:` before the first wildcard must be the start of
 * one (`h*`, `http*`). A pattern that begins with a wildcard and has a scheme-like part before
 * `://` must let that part match http or https (`*://`, `?ttps://`; not `*-extension://`).
 */
export function nonHttpScheme(pattern: string): string | null {
  const lead = /^[^*?]*/.exec(pattern)![0];
  if (lead !== '') {
    const colon = lead.indexOf(':');
    const scheme = colon >= 0 ? lead.slice(0, colon) : lead;
    const s = scheme.toLowerCase();
    const ok = colon >= 0 ? s === 'http' || s === 'https' : 'https'.startsWith(s);
    return ok ? null : scheme;
  }
  const sep = pattern.indexOf('://');
  if (sep <= 0) return null;
  const head = pattern.slice(0, sep);
  if (!SCHEME_OR_WILDCARD.test(head)) return null;
  const h = head.toLowerCase();
  return wildcardMatch('http', h, { anyChar: true }) || wildcardMatch('https', h, { anyChar: true }) ? null : head;
}

/** Why `pattern` is refused (rule `k`), or null: the message names the scheme and what is allowed. */
export function interceptPatternError(pattern: string, k: number): string | null {
  const scheme = nonHttpScheme(pattern);
  if (scheme === null) return null;
  return `rules[${k}].urlPattern ${JSON.stringify(pattern.slice(0, 200))} is for ${JSON.stringify(scheme.slice(0, 60))} URLs: only http and https requests can be intercepted (never chrome-extension:, file:, data: or blob: ones). Begin the pattern with http://, https:// or *`;
}
