/**
 * A tool result whose JSON text the worker already made (to measure it against the size cap)
 * goes into its JSON-RPC frame as that text instead of being serialised a second time.
 *
 * The result object keeps its fields (code reading `.value` sees them); its `toJSON` answers a
 * placeholder string, so the peer's JSON.stringify of the frame writes the placeholder, and the
 * socket's send (connection.ts) puts the text in its place before the secret scrub. The frame is
 * the same text JSON.stringify of the whole would make. The placeholder holds a random part made
 * when the worker starts, so no text from a page can stand for one.
 */
const MARK = `opentabs-serialised-result:${crypto.randomUUID()}:`;
let counter = 0;

/** Texts of results serialised into a frame and not yet sent, by the placeholder that stands for them. */
const waiting = new Map<string, string>();

/** Shorter texts are serialised again with the frame: that costs less than the placeholder's round. */
export const SPLICE_MIN_CHARS = 4096;

/**
 * `result` as itself, with `json` (JSON.stringify(result), made by the caller) used for it when
 * the frame is written; `result` unchanged when `json` is short.
 */
export function withJson<T extends object>(result: T, json: string): T {
  if (json.length < SPLICE_MIN_CHARS) return result;
  const out = { ...result };
  Object.defineProperty(out, 'toJSON', {
    enumerable: false,
    value: () => {
      const mark = `${MARK}${++counter}`;
      waiting.set(mark, json);
      return mark;
    },
  });
  return out;
}

/**
 * The frame's text with every result placeholder in it replaced by its result's JSON. A frame is
 * made and sent in one go (rpc-peer.ts), so whatever is left waiting belonged to a frame that was
 * not sent (the socket had closed): it is dropped.
 */
export function spliceResults(text: string): string {
  if (waiting.size === 0) return text;
  let out = text;
  for (const [mark, json] of waiting) {
    const quoted = `"${mark}"`;
    const at = out.indexOf(quoted);
    if (at >= 0) out = out.slice(0, at) + json + out.slice(at + quoted.length);
  }
  waiting.clear();
  return out;
}

/** Drop texts of frames that will not be sent (the socket closed between making and sending). */
export function dropUnsentResults(): void {
  waiting.clear();
}
