/**
 * Edit one member of a JSON (or JSONC: comments, trailing commas) config file in place: the text
 * around it — other servers, settings, comments, indentation, key order — stays byte for byte.
 * The parser keeps each value's offsets; an edit replaces, inserts or deletes one property's text,
 * and the result is parsed again and compared with the intended value before anyone writes it.
 */

export interface JsonDialect {
  /** `//` and `/* *\/` comments. */
  comments: boolean;
  /** A comma after the last element of an object or array. */
  trailingCommas: boolean;
}

export const STRICT_JSON: JsonDialect = { comments: false, trailingCommas: false };

interface Base {
  start: number;
  end: number;
  value: unknown;
}
interface ObjectNode extends Base {
  kind: 'object';
  props: Prop[];
}
interface OtherNode extends Base {
  kind: 'array' | 'scalar';
}
export type JsonNode = ObjectNode | OtherNode;
export interface Prop {
  key: string;
  start: number;
  value: JsonNode;
  /** Offset of the comma that follows the value, if any. */
  comma: number | null;
}

/** A file that is not valid in its dialect: the message has line and column. */
export class JsonSyntaxError extends Error {}

const NUMBER_RE = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

export function parseJson(text: string, dialect: JsonDialect): JsonNode {
  let i = 0;
  const fail = (what: string, at = i): never => {
    const before = text.slice(0, at);
    const line = before.split('\n').length;
    const column = at - before.lastIndexOf('\n');
    throw new JsonSyntaxError(`${what} at line ${line}, column ${column}`);
  };
  const skip = () => {
    for (;;) {
      const ch = text[i];
      if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r' || ch === '\uFEFF') i++;
      else if (ch === '/' && (text[i + 1] === '/' || text[i + 1] === '*')) {
        if (!dialect.comments) fail('a comment (this file must be plain JSON)');
        if (text[i + 1] === '/') {
          while (i < text.length && text[i] !== '\n') i++;
        } else {
          const close = text.indexOf('*/', i + 2);
          if (close < 0) fail('an unclosed /* comment');
          i = close + 2;
        }
      } else return;
    }
  };
  const str = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === '\\') i++;
      else if (text.charCodeAt(i) < 0x20) fail('a control character in a string');
      i++;
    }
    if (i >= text.length) fail('an unterminated string', start);
    i++;
    try {
      return JSON.parse(text.slice(start, i)) as string;
    } catch {
      return fail('an invalid escape in a string', start);
    }
  };
  const value = (depth: number): JsonNode => {
    if (depth > 512) fail('nesting deeper than 512 levels');
    skip();
    const start = i;
    const ch = text[i];
    if (ch === '{') {
      i++;
      const props: Prop[] = [];
      const obj: Record<string, unknown> = {};
      for (;;) {
        skip();
        if (text[i] === '}') {
          if (props.length > 0 && props.at(-1)!.comma !== null && !dialect.trailingCommas) fail('a comma before }', props.at(-1)!.comma!);
          i++;
          break;
        }
        if (props.length > 0 && props.at(-1)!.comma === null) fail('a missing comma or }');
        if (text[i] !== '"') fail(text[i] === undefined ? 'the end of the file inside an object' : `an unexpected ${JSON.stringify(text[i])} where a "key" belongs`);
        const keyStart = i;
        const key = str();
        skip();
        if (text[i] !== ':') fail('a missing : after a key');
        i++;
        const v = value(depth + 1);
        Object.defineProperty(obj, key, { value: v.value, enumerable: true, writable: true, configurable: true });
        skip();
        let comma: number | null = null;
        if (text[i] === ',') comma = i++;
        props.push({ key, start: keyStart, value: v, comma });
      }
      return { kind: 'object', start, end: i, props, value: obj };
    }
    if (ch === '[') {
      i++;
      const items: unknown[] = [];
      let comma = true;
      let lastComma = -1;
      for (;;) {
        skip();
        if (text[i] === ']') {
          if (items.length > 0 && comma && !dialect.trailingCommas) fail('a comma before ]', lastComma);
          i++;
          break;
        }
        if (!comma) fail(text[i] === undefined ? 'the end of the file inside an array' : 'a missing comma or ]');
        items.push(value(depth + 1).value);
        skip();
        comma = text[i] === ',';
        if (comma) lastComma = i++;
      }
      return { kind: 'array', start, end: i, value: items };
    }
    if (ch === '"') return { kind: 'scalar', start, value: str(), end: i };
    for (const [word, v] of [['true', true], ['false', false], ['null', null]] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return { kind: 'scalar', start, end: i, value: v };
      }
    }
    NUMBER_RE.lastIndex = i;
    const m = NUMBER_RE.exec(text);
    if (m) {
      i += m[0].length;
      return { kind: 'scalar', start, end: i, value: Number(m[0]) };
    }
    return fail(ch === undefined ? 'the end of the file where a value belongs' : `an unexpected ${JSON.stringify(ch)}`);
  };
  const root = value(0);
  skip();
  if (i < text.length) fail('text after the end of the top-level value');
  return root;
}

/** Why an edit was refused: the message names the key path; the caller adds the file. */
export class JsonEditRefused extends Error {}

function member(obj: ObjectNode, key: string, where: string): Prop | undefined {
  const found = obj.props.filter((p) => p.key === key);
  if (found.length > 1) throw new JsonEditRefused(`"${where}${key}" appears ${found.length} times; keep one and retry`);
  return found[0];
}

/** Leading whitespace of the line that holds offset `at`. */
function lineIndent(text: string, at: number): string {
  const lineStart = text.lastIndexOf('\n', at - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart))![0];
}

/** The file's indent unit: the leading whitespace of the first indented line; two spaces if none. */
export function indentUnit(text: string): string {
  const m = /\n([ \t]+)\S/.exec(text);
  return m ? m[1]! : '  ';
}

function render(value: unknown, indent: string, unit: string, eol: string): string {
  return JSON.stringify(value, null, unit).replace(/\n/g, `${eol}${indent}`);
}

/**
 * Where to put text that follows offset `pos` on a new line: past spaces and comments that end
 * the same line, so `"a": 1 // note` keeps its note beside it.
 */
function endOfLine(text: string, pos: number): number {
  let j = pos;
  for (;;) {
    while (text[j] === ' ' || text[j] === '\t') j++;
    if (text.startsWith('//', j)) {
      while (j < text.length && text[j] !== '\n' && text[j] !== '\r') j++;
    } else if (text.startsWith('/*', j)) {
      const close = text.indexOf('*/', j + 2);
      if (close < 0 || text.slice(j, close).includes('\n')) return pos;
      j = close + 2;
      continue;
    }
    return text[j] === '\n' || text[j] === '\r' ? j : pos;
  }
}

/** Text with `key: value` added as the last member of `obj`. */
function insertMember(text: string, obj: ObjectNode, key: string, value: unknown, unit: string, eol: string): string {
  const last = obj.props.at(-1);
  if (!last) {
    const indent = lineIndent(text, obj.start);
    const inner = text.slice(obj.start + 1, obj.end - 1);
    const body = `${JSON.stringify(key)}: ${render(value, indent + unit, unit, eol)}`;
    if (inner.trim() === '') return `${text.slice(0, obj.start)}{${eol}${indent}${unit}${body}${eol}${indent}}${text.slice(obj.end)}`;
    return `${text.slice(0, obj.start + 1)}${eol}${indent}${unit}${body}${text.slice(obj.start + 1)}`;
  }
  const multiLine = text.slice(obj.start, last.start).includes('\n');
  const indent = multiLine ? lineIndent(text, last.start) : lineIndent(text, obj.start) + unit;
  const body = `${JSON.stringify(key)}: ${render(value, indent, unit, eol)}`;
  if (last.comma !== null) {
    // A trailing comma (JSONC): keep the style, ours gets one too.
    const at = endOfLine(text, last.comma + 1);
    return `${text.slice(0, at)}${eol}${indent}${body},${text.slice(at)}`;
  }
  if (!multiLine) return `${text.slice(0, last.value.end)}, ${body}${text.slice(last.value.end)}`;
  const at = endOfLine(text, last.value.end);
  return `${text.slice(0, last.value.end)},${text.slice(last.value.end, at)}${eol}${indent}${body}${text.slice(at)}`;
}

/** Text without member `prop` of `obj` (and the comma and line break that went with it). */
function deleteMember(text: string, obj: ObjectNode, prop: Prop): string {
  const index = obj.props.indexOf(prop);
  if (obj.props.length === 1) {
    return `${text.slice(0, obj.start)}{}${text.slice(obj.end)}`;
  }
  let a = prop.start;
  let b: number;
  if (prop.comma !== null) {
    // A comment that ends our line goes with it.
    b = endOfLine(text, prop.comma + 1);
    while (a > 0 && (text[a - 1] === ' ' || text[a - 1] === '\t')) a--;
    if (text[a - 1] === '\n') a--;
    if (text[a - 1] === '\r') a--;
  } else {
    // The last member: the comma before it goes too.
    const prev = obj.props[index - 1]!;
    a = prev.comma!;
    b = prop.value.end;
  }
  return text.slice(0, a) + text.slice(b);
}

export interface MemberEdit {
  /** The object that holds the servers, e.g. ["mcpServers"] or ["mcp"]. */
  container: string[];
  name: string;
  /** undefined: remove the member. */
  value: unknown;
}

export interface EditResult {
  text: string;
  /** What was at container.name before: undefined when absent. */
  before: unknown;
  changed: boolean;
}

function setIn(root: Record<string, unknown>, path: string[], name: string, value: unknown): void {
  let o = root;
  for (const k of path) {
    if (!Object.hasOwn(o, k)) Object.defineProperty(o, k, { value: {}, enumerable: true, writable: true, configurable: true });
    o = o[k] as Record<string, unknown>;
  }
  if (value === undefined) delete o[name];
  else Object.defineProperty(o, name, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * Apply one edit to a file's text. An empty (or whitespace) text is a new file. Throws
 * JsonSyntaxError for a text that does not parse, JsonEditRefused when the file's shape does not
 * allow a safe edit (the top level or a container is not an object, a key appears twice).
 */
export function editJsonMember(original: string, dialect: JsonDialect, edit: MemberEdit): EditResult {
  const fresh = original.trim() === '';
  const text = fresh ? '{}\n' : original;
  const root = parseJson(text, dialect);
  if (root.kind !== 'object') throw new JsonEditRefused('the top level is not an object');
  const unit = fresh ? '  ' : indentUnit(text);
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  let obj: ObjectNode = root;
  let where = '';
  let missing: string[] | null = null;
  for (const [n, k] of edit.container.entries()) {
    const p = member(obj, k, where);
    where += `${k}.`;
    if (!p) {
      missing = edit.container.slice(n);
      break;
    }
    if (p.value.kind !== 'object') throw new JsonEditRefused(`"${where.slice(0, -1)}" is not an object`);
    obj = p.value;
  }
  const existing = missing ? undefined : member(obj, edit.name, where);
  const before = existing?.value.value;
  if (edit.value === undefined && !existing) return { text: original, before, changed: false };
  if (existing && edit.value !== undefined && Bun.deepEquals(before, edit.value, true)) return { text: original, before, changed: false };
  let next: string;
  if (edit.value === undefined) next = deleteMember(text, obj, existing!);
  else if (existing) {
    const indent = lineIndent(text, existing.start);
    next = text.slice(0, existing.value.start) + render(edit.value, indent, unit, eol) + text.slice(existing.value.end);
  } else if (missing) {
    const wrapped = missing.slice(1).reduceRight<unknown>((v, k) => ({ [k]: v }), { [edit.name]: edit.value });
    next = insertMember(text, obj, missing[0]!, wrapped, unit, eol);
  } else next = insertMember(text, obj, edit.name, edit.value, unit, eol);
  // The edited text must parse in the same dialect to exactly the intended value.
  const expected = structuredClone(root.value) as Record<string, unknown>;
  setIn(expected, edit.container, edit.name, edit.value);
  let got: unknown;
  try {
    got = parseJson(next, dialect).value;
  } catch (e) {
    throw new Error(`internal error: the edited text does not parse (${(e as Error).message})`);
  }
  if (!Bun.deepEquals(got, expected, true)) throw new Error('internal error: the edited text does not hold the intended value');
  return { text: next, before, changed: true };
}
