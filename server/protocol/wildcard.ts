/**
 * URL patterns (`*` any run of characters, `?` one character where a caller says so) of the tools
 * and the paths of plugins' match patterns, matched without a RegExp. A pattern turned into
 * `^.*a.*a.*a.*b$` backtracks polynomially in the URL's length — *a*a*a*a*b against a URL of 200
 * a's takes V8 minutes — and the service worker that runs it stops answering every tool. This
 * matcher backtracks only to the last `*`: at most text length × pattern length steps.
 */
export function wildcardMatch(text: string, pattern: string, opts: { anyChar?: boolean } = {}): boolean {
  let t = 0;
  let p = 0;
  let starP = -1;
  let starT = 0;
  while (t < text.length) {
    const c = pattern[p];
    if (p < pattern.length && c !== '*' && (c === text[t] || (opts.anyChar === true && c === '?'))) {
      t++;
      p++;
    } else if (c === '*') {
      starP = p++;
      starT = t;
    } else if (starP >= 0) {
      p = starP + 1;
      t = ++starT;
    } else {
      return false;
    }
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}
