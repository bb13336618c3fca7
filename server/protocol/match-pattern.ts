/**
 * Chrome match patterns (https://developer.chrome.com/docs/extensions/develop/concepts/match-patterns):
 * which patterns a plugin may declare (checked by the server and `opentabs plugin build`) and
 * how they match URLs (the extension deciding which tabs belong to a plugin). One module for
 * both, so what the server accepts is what the extension can match.
 */

/**
 * Patterns a plugin may declare: `<all_urls>` or `<scheme>://<host><path>`, scheme
 * http/https/ws/wss/file/*, host `*`, `*.example.com` or an exact host. No ports: Chrome ignores
 * them in patterns, so a port would only suggest a precision the match does not have.
 */
const DECLARABLE_RE = /^(?:<all_urls>|(?:\*|https?|wss?):\/\/(?:\*|(?:\*\.)?[^/*:]+)\/.*|file:\/\/\/.*)$/;

export function isMatchPattern(p: string): boolean {
  return DECLARABLE_RE.test(p) && compileMatchPattern(p) !== null;
}

const cache = new Map<string, RegExp | null>();

const escape = (s: string) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&');

/** Compile one pattern; null when it is not a valid match pattern (it then matches nothing). */
export function compileMatchPattern(pattern: string): RegExp | null {
  const hit = cache.get(pattern);
  if (hit !== undefined) return hit;
  let re: RegExp | null = null;
  if (pattern === '<all_urls>') {
    re = /^(https?|wss?|file|ftp):\/\//;
  } else {
    const m = /^(\*|https?|wss?|file|ftp):\/\/([^/]*)(\/.*)$/.exec(pattern);
    if (m) {
      const [, scheme, host, path] = m;
      const schemeRe = scheme === '*' ? 'https?' : escape(scheme);
      let hostRe: string;
      if (host === '*') hostRe = '[^/]*';
      else if (host.startsWith('*.')) hostRe = `(?:[^/]*\\.)?${escape(host.slice(2))}`;
      else hostRe = escape(host);
      // A pattern host without a port matches any port (Chrome ignores ports in patterns).
      const portRe = host.includes(':') || host === '*' ? '' : '(?::\\d+)?';
      const pathRe = path.split('*').map(escape).join('.*');
      re = new RegExp(`^${schemeRe}://${hostRe}${portRe}${pathRe}$`);
    }
  }
  cache.set(pattern, re);
  return re;
}

export function matchesPattern(url: string, pattern: string): boolean {
  return compileMatchPattern(pattern)?.test(url) ?? false;
}

/** A URL belongs to a plugin when it matches one of its patterns and none of its exclude patterns. */
export function urlMatchesPlugin(url: string | undefined, plugin: { urlPatterns: string[]; excludePatterns: string[] }): boolean {
  if (!url) return false;
  // Patterns match without the fragment, like Chrome does.
  const u = url.split('#')[0];
  return plugin.urlPatterns.some((p) => matchesPattern(u, p)) && !plugin.excludePatterns.some((p) => matchesPattern(u, p));
}
