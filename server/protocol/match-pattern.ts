/**
 * Chrome match patterns (https://developer.chrome.com/docs/extensions/develop/concepts/match-patterns):
 * which patterns a plugin may declare (checked by the server and `opentabs plugin build`) and
 * how they match URLs (the extension deciding which tabs belong to a plugin). One module for
 * both, so what the server accepts is what the extension can match.
 */
import { wildcardMatch } from './wildcard.ts';

/**
 * Patterns a plugin may declare: `<all_urls>` or `<scheme>://<host><path>`, scheme
 * http/https/ws/wss/file/*, host `*`, `*.example.com` or an exact host, optionally with a port
 * (`http://127.0.0.1:9847/*`) so a plugin for one local app is not injected into every local
 * page on every port. A host without a port matches any port.
 */
const DECLARABLE_RE = /^(?:<all_urls>|(?:\*|https?|wss?):\/\/(?:\*|(?:\*\.)?[^/*:]+(?::(?:[1-9]\d{0,4}))?)\/.*|file:\/\/\/.*)$/;

const DEFAULT_PORTS: Record<string, string> = { http: '80', ws: '80', https: '443', wss: '443' };

export function isMatchPattern(p: string): boolean {
  const port = /^[^:]+:\/\/[^/]*:(\d+)\//.exec(p)?.[1];
  if (port !== undefined && Number(port) > 65535) return false;
  return DECLARABLE_RE.test(p) && compileMatchPattern(p) !== null;
}

const cache = new Map<string, RegExp | null>();
/** Per pattern: its scheme, host and port as a RegExp ending where the path starts, and its path. */
const matchers = new Map<string, { authority: RegExp; path: string } | null>();

const escape = (s: string) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&');

/** Compile one pattern; null when it is not a valid match pattern (it then matches nothing). */
export function compileMatchPattern(pattern: string): RegExp | null {
  const hit = cache.get(pattern);
  if (hit !== undefined) return hit;
  let re: RegExp | null = null;
  if (pattern === '<all_urls>') {
    re = /^(https?|wss?|file|ftp):\/\//;
  } else {
    const parts = patternParts(pattern);
    if (parts) re = new RegExp(`^${parts.authority}${parts.path.split('*').map(escape).join('.*')}$`);
  }
  cache.set(pattern, re);
  return re;
}

/**
 * A pattern's scheme, host and port as RegExp source (no `/` in them, so they end where the URL's
 * path starts) and its path as written; null when it is not a match pattern.
 */
function patternParts(pattern: string): { authority: string; path: string } | null {
  const m = /^(\*|https?|wss?|file|ftp):\/\/([^/]*)(\/.*)$/.exec(pattern);
  if (!m) return null;
  const [, scheme, host, path] = m;
  const schemeRe = scheme === '*' ? 'https?' : escape(scheme);
  const portAt = host.lastIndexOf(':');
  const name = portAt >= 0 ? host.slice(0, portAt) : host;
  const port = portAt >= 0 ? host.slice(portAt + 1) : undefined;
  let hostRe: string;
  if (name === '*') hostRe = '[^/]*';
  else if (name.startsWith('*.')) hostRe = `(?:[^/:]*\\.)?${escape(name.slice(2))}`;
  else hostRe = escape(name);
  // A pattern host without a port matches any port; with a port, only that port. Browsers drop
  // a scheme's default port from URLs, so `:80` on http also matches a URL without a port.
  let portRe: string;
  if (port === undefined) portRe = name === '*' ? '' : '(?::\\d+)?';
  else if (!/^\d+$/.test(port)) portRe = escape(`:${port}`);
  else if (DEFAULT_PORTS[scheme] === port || (scheme === '*' && (port === '80' || port === '443'))) portRe = `(?::${port})?`;
  else portRe = `:${port}`;
  return { authority: `${schemeRe}://${hostRe}${portRe}`, path };
}

/**
 * The authority by RegExp (it cannot reach past the first `/`, so it never backtracks far), the
 * path by wildcardMatch: a path pattern with several `*` as one RegExp backtracked quadratically
 * in the URL's length (a path pattern with a wildcard on each side of `/projects/`, against a long
 * URL of a plugin's site, froze the service worker that checks every tab's URL).
 */
function matcherFor(pattern: string): { authority: RegExp; path: string } | null {
  const hit = matchers.get(pattern);
  if (hit !== undefined) return hit;
  const parts = patternParts(pattern);
  const m = parts ? { authority: new RegExp(`^${parts.authority}(?=/)`), path: parts.path } : null;
  matchers.set(pattern, m);
  return m;
}

export function matchesPattern(url: string, pattern: string): boolean {
  if (pattern === '<all_urls>') return compileMatchPattern(pattern)!.test(url);
  const m = matcherFor(pattern);
  const authority = m?.authority.exec(url);
  return authority ? wildcardMatch(url.slice(authority[0].length), m!.path) : false;
}

/** A URL belongs to a plugin when it matches one of its patterns and none of its exclude patterns. */
export function urlMatchesPlugin(url: string | undefined, plugin: { urlPatterns: string[]; excludePatterns: string[] }): boolean {
  if (!url) return false;
  // Patterns match without the fragment, like Chrome does.
  const u = url.split('#')[0];
  return plugin.urlPatterns.some((p) => matchesPattern(u, p)) && !plugin.excludePatterns.some((p) => matchesPattern(u, p));
}
