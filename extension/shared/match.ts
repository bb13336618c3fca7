/**
 * Chrome match patterns (https://developer.chrome.com/docs/extensions/develop/concepts/match-patterns)
 * for plugin urlPatterns / excludePatterns. Pure functions, shared by the service worker and tests.
 *
 *   <all_urls> | <scheme>://<host><path>   scheme: * (http|https) or a concrete scheme
 *   host: * | *.example.com | example.com, optionally :port or :*  (no port = any port)
 *   path: glob where * matches any run of characters (query string included)
 */
export interface CompiledPattern {
  source: string;
  test(url: string): boolean;
}

const escapeRe = (s: string) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&');

export function compilePattern(pattern: string): CompiledPattern {
  if (pattern === '<all_urls>') {
    return { source: pattern, test: (u) => /^(https?|wss?|file|ftp):/.test(u) };
  }
  const m = /^(\*|[a-z][a-z0-9+.-]*):\/\/([^/]*)(\/.*)$/.exec(pattern);
  if (!m) return { source: pattern, test: () => false };
  const [, scheme, hostPort, path] = m;
  let host = hostPort;
  let port: string | null = null;
  const colon = hostPort.lastIndexOf(':');
  if (colon > -1 && !hostPort.endsWith(']')) {
    host = hostPort.slice(0, colon);
    port = hostPort.slice(colon + 1);
  }
  const pathRe = new RegExp('^' + path.split('*').map(escapeRe).join('.*') + '$');
  return {
    source: pattern,
    test(url: string) {
      let u: URL;
      try {
        u = new URL(url);
      } catch {
        return false;
      }
      const s = u.protocol.slice(0, -1);
      if (scheme === '*' ? s !== 'http' && s !== 'https' : s !== scheme) return false;
      if (scheme !== 'file') {
        const h = u.hostname;
        if (host === '*') {
          // any host
        } else if (host.startsWith('*.')) {
          const base = host.slice(2);
          if (h !== base && !h.endsWith('.' + base)) return false;
        } else if (h !== host) return false;
        if (port !== null && port !== '*' && port !== '' && u.port !== port) {
          const dflt = s === 'https' ? '443' : s === 'http' ? '80' : '';
          if (!(u.port === '' && port === dflt)) return false;
        }
      }
      return pathRe.test(u.pathname + u.search);
    },
  };
}

/** A URL matches when some url pattern accepts it and no exclude pattern does. */
export function matcher(urlPatterns: string[], excludePatterns: string[] = []): (url: string) => boolean {
  const inc = urlPatterns.map(compilePattern);
  const exc = excludePatterns.map(compilePattern);
  return (url) => inc.some((p) => p.test(url)) && !exc.some((p) => p.test(url));
}

export interface RankableTab {
  id?: number;
  active: boolean;
  windowId: number;
  lastAccessed?: number;
}

/**
 * Best tab first: the active tab of the focused window, then other active tabs, then tabs of the
 * focused window, then the rest; most recently used first within each group.
 */
export function rankTabs<T extends RankableTab>(tabs: T[], focusedWindowId: number | undefined): T[] {
  const score = (t: T) => (t.active && t.windowId === focusedWindowId ? 0 : t.active ? 1 : t.windowId === focusedWindowId ? 2 : 3);
  return [...tabs].sort((a, b) => score(a) - score(b) || (b.lastAccessed ?? 0) - (a.lastAccessed ?? 0) || (a.id ?? 0) - (b.id ?? 0));
}
