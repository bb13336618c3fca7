/**
 * Edit one `[mcp_servers.<name>]` table of a TOML config file (Codex CLI's config.toml) in place:
 * every other line — other tables, comments, blank lines — stays as it was. The table (and its
 * sub-tables such as `[mcp_servers.<name>.env]`) is replaced where it stands, or appended; the
 * result is parsed again and must hold exactly the intended value with everything else unchanged.
 */

/** Why an edit was refused: the caller adds the file. */
export class TomlEditRefused extends Error {}

export type TomlValue = string | { [key: string]: string };

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

function tomlKey(k: string): string {
  return BARE_KEY.test(k) ? k : JSON.stringify(k);
}

/** A TOML basic string: JSON's escapes are TOML's, except that TOML has no \/ (JSON.stringify emits none). */
function tomlString(s: string): string {
  return JSON.stringify(s);
}

/** `[table]` then one `key = value` line a key: strings, and flat tables of strings as inline tables. */
export function renderTomlTable(path: string[], entry: Record<string, TomlValue>): string {
  const lines = [`[${path.map(tomlKey).join('.')}]`];
  for (const [k, v] of Object.entries(entry)) {
    lines.push(
      typeof v === 'string'
        ? `${tomlKey(k)} = ${tomlString(v)}`
        : `${tomlKey(k)} = { ${Object.entries(v)
            .map(([ik, iv]) => `${tomlKey(ik)} = ${tomlString(iv)}`)
            .join(', ')} }`,
    );
  }
  return lines.join('\n');
}

/** The key path of a `[a."b".c]` header line, or null when the line is not a table header. */
function headerPath(line: string): { path: string[]; array: boolean } | null {
  const m = /^\s*(\[\[?)(.*?)(\]\]?)\s*(#.*)?$/.exec(line);
  if (!m) return null;
  const array = m[1] === '[[';
  const path: string[] = [];
  let rest = m[2]!.trim();
  while (rest.length > 0) {
    let key: string;
    if (rest[0] === '"') {
      const end = /^"(?:[^"\\]|\\.)*"/.exec(rest);
      if (!end) return null;
      try {
        key = JSON.parse(end[0]) as string;
      } catch {
        return null;
      }
      rest = rest.slice(end[0].length);
    } else if (rest[0] === "'") {
      const close = rest.indexOf("'", 1);
      if (close < 0) return null;
      key = rest.slice(1, close);
      rest = rest.slice(close + 1);
    } else {
      const end = /^[A-Za-z0-9_-]+/.exec(rest);
      if (!end) return null;
      key = end[0];
      rest = rest.slice(key.length);
    }
    path.push(key);
    rest = rest.trimStart();
    if (rest.startsWith('.')) rest = rest.slice(1).trimStart();
    else if (rest.length > 0) return null;
  }
  return { path, array };
}

/** Line indexes that start a table, skipping lines inside multi-line strings. */
function tableHeaders(lines: string[]): Array<{ index: number; path: string[] }> {
  const headers: Array<{ index: number; path: string[] }> = [];
  let inString: '"""' | "'''" | null = null;
  for (const [index, line] of lines.entries()) {
    if (inString === null) {
      const h = headerPath(line);
      if (h) {
        headers.push({ index, path: h.path });
        continue;
      }
    }
    // Count the multi-line string delimiters on this line (outside comments, roughly: a config
    // line rarely mixes both); an odd count opens or closes one.
    for (const delim of ['"""', "'''"] as const) {
      if (inString !== null && inString !== delim) continue;
      const count = line.split(delim).length - 1;
      if (count % 2 === 1) inString = inString === null ? delim : null;
    }
  }
  return headers;
}

function parseToml(text: string): Record<string, unknown> {
  return Bun.TOML.parse(text) as Record<string, unknown>;
}

function without(obj: Record<string, unknown>, container: string, name: string): Record<string, unknown> {
  const copy = structuredClone(obj);
  const c = copy[container];
  if (c && typeof c === 'object' && !Array.isArray(c)) {
    delete (c as Record<string, unknown>)[name];
    if (Object.keys(c).length === 0) delete copy[container];
  }
  return copy;
}

export interface TomlEditResult {
  text: string;
  before: unknown;
  changed: boolean;
}

/**
 * Set (entry) or remove (undefined) table `[container.name]`. Throws the parser's error for a text
 * that does not parse, TomlEditRefused when the entry is written in a form this edit cannot
 * replace (an inline table, dotted keys).
 */
export function editTomlTable(original: string, container: string, name: string, entry: Record<string, TomlValue> | undefined): TomlEditResult {
  const parsed = parseToml(original);
  const holder = parsed[container];
  const before = holder && typeof holder === 'object' && !Array.isArray(holder) ? (holder as Record<string, unknown>)[name] : undefined;
  if (entry === undefined && before === undefined) return { text: original, before, changed: false };
  if (entry !== undefined && Bun.deepEquals(before, entry, true)) return { text: original, before, changed: false };

  const eol = original.includes('\r\n') ? '\r\n' : '\n';
  const lines = original.split(/\r?\n/);
  const headers = tableHeaders(lines);
  // Spans of our table and its sub-tables: from the header to the next header, less the blank
  // and comment lines at the end (those belong to the next table).
  const spans: Array<[number, number]> = [];
  for (const [n, h] of headers.entries()) {
    if (h.path.length < 2 || h.path[0] !== container || h.path[1] !== name) continue;
    let end = n + 1 < headers.length ? headers[n + 1]!.index : lines.length;
    while (end > h.index + 1 && /^\s*(#.*)?$/.test(lines[end - 1]!)) end--;
    spans.push([h.index, end]);
  }
  const block = entry === undefined ? null : renderTomlTable([container, name], entry).split('\n');
  let out: string[];
  if (spans.length > 0) {
    out = [];
    let at = 0;
    for (const [n, [s, e]] of spans.entries()) {
      out.push(...lines.slice(at, s));
      if (n === 0 && block) out.push(...block);
      at = e;
      // A removed table takes one blank line after it along, so no double blank is left.
      if (!block && at < lines.length && lines[at]!.trim() === '' && (out.length === 0 || out.at(-1)!.trim() === '')) at++;
    }
    out.push(...lines.slice(at));
  } else if (block) {
    out = [...lines];
    while (out.length > 0 && out.at(-1)!.trim() === '') out.pop();
    if (out.length > 0) out.push('');
    out.push(...block, '');
  } else out = lines;
  const text = out.join(eol);

  let got: Record<string, unknown>;
  try {
    got = parseToml(text);
  } catch {
    throw new TomlEditRefused(`${container}.${name} is written in a form this command does not edit (an inline table or dotted keys): remove it by hand and retry`);
  }
  const gotHolder = got[container] as Record<string, unknown> | undefined;
  const ok = Bun.deepEquals(gotHolder?.[name], entry, true) && Bun.deepEquals(without(got, container, name), without(parsed, container, name), true);
  if (!ok) throw new TomlEditRefused(`${container}.${name} is written in a form this command does not edit (an inline table or dotted keys): remove it by hand and retry`);
  return { text, before, changed: true };
}
