/**
 * The one reading of untrusted text for a terminal or a log file a person reads (a page's title,
 * URL, log line or error; a tool call's arguments; a plugin package's name, description or load
 * error): characters a terminal does not simply show become \uXXXX. The CLI prints everything
 * through it (cli/output.ts), and server.log and audit.log lines are written through it (the
 * same JSON, read with cat or tail -f).
 *
 * Not shown: C0 controls but newline and tab (ESC starts the sequences that erase or rewrite lines,
 * move the cursor, set the title, write the clipboard with OSC 52 or make OSC 8 links; CR and BS
 * overwrite what was printed), DEL and C1 (U+0080–U+009F: CSI and others some terminals obey),
 * format characters (bidi embeddings, overrides, isolates and marks that reorder text, zero-width
 * spaces and joiners, tag characters), the line and paragraph separators, and the other invisible
 * ones (variation selectors, fillers). Shown, an approval's arguments or a page title could read
 * otherwise than the text is.
 */
// eslint-disable-next-line no-control-regex
export const UNSHOWN = /(?![\n\t])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu;

/** A character as \uXXXX (astral ones as their two UTF-16 halves: valid in JSON text too). */
export function escapedChar(ch: string): string {
  let s = '';
  for (let i = 0; i < ch.length; i++) s += `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`;
  return s;
}

/** `s` with what UNSHOWN matches as \uXXXX; newlines and tabs stay. JSON text stays the same JSON. */
export function printable(s: string): string {
  return s.replace(UNSHOWN, escapedChar);
}
