/**
 * Which methods a path accepts, derived from the routes registered on the app, so 405 + Allow
 * covers every router without a second list of endpoints to keep in sync.
 */

/** Hono path pattern → RegExp (`:param`, `:param{re}`, `*`). */
function patternToRegExp(path: string): RegExp {
  let re = '';
  for (const part of path.split(/(:[A-Za-z0-9_]+(?:\{[^}]*\})?\??|\*)/)) {
    if (part === '*') re += '.*';
    else if (part.startsWith(':')) {
      const custom = /\{([^}]*)\}/.exec(part)?.[1];
      re += `(${custom ?? '[^/]+'})${part.endsWith('?') ? '?' : ''}`;
    } else re += part.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** For a path: the methods registered for it (ALL-method entries are middleware and ignored). */
export function methodTable(routes: readonly { path: string; method: string }[]): (path: string) => string[] {
  const entries = routes.filter((r) => r.method !== 'ALL').map((r) => ({ re: patternToRegExp(r.path), method: r.method.toUpperCase() }));
  return (path) => {
    const methods = new Set<string>();
    for (const e of entries) if (e.re.test(path)) methods.add(e.method);
    // Hono answers HEAD with the GET handler.
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods];
  };
}
