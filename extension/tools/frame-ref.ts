/**
 * Which frame a browser_snapshot ref names (`e12`: the top document; `f7e3`: element e3 of frame 7,
 * a chrome.webNavigation frameId). Its own module: element-node.ts and frames.ts both need it, and
 * frames.ts builds on element-node.ts.
 */

/** The frame a ref names: 0 (the top document) for `eN` or no ref, the frameId for `fFeN`. */
export function frameOfRef(ref: string | null | undefined): number {
  const m = ref ? /^f(\d+)e\d+$/.exec(ref) : null;
  return m ? Number(m[1]) : 0;
}
