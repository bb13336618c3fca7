/**
 * A schema inferred from observed values, written as valibot code: types from the values seen,
 * required when present in every sample, a small set of repeated strings as an enum (inputs only),
 * integers apart from other numbers, null as nullable. Outputs use v.looseObject, so fields the
 * app adds later do not fail the tool.
 */
export type Shape =
  | { kind: 'string'; values: Set<string> }
  | { kind: 'number'; integer: boolean }
  | { kind: 'boolean' }
  | { kind: 'array'; items: Shape | null }
  | { kind: 'object'; props: Map<string, Prop>; samples: number }
  /** An object with more distinct keys than DRAFT_MAX_PROPS: keyed by data (ids, dates), not a fixed set of fields. */
  | { kind: 'record' }
  | { kind: 'unknown' };

/**
 * Objects with more distinct keys than this (over all samples) are drafted as a record of unknown
 * values: a page's answer of 5,000 objects each with a key of its own made a 5,000-field schema,
 * 30 MB of draft and ≈ 2 minutes of the server's time.
 */
export const DRAFT_MAX_PROPS = 200;
/** Distinct strings kept per field: enough to tell whether it has the 2–3 values of a picklist. */
const MAX_STRING_VALUES = 4;

/** A property: its shape over the non-null values seen (null when only nulls), how often present, whether null was seen. */
export interface Prop {
  shape: Shape | null;
  seen: number;
  nullable: boolean;
}

export interface Inferred {
  shape: Shape;
  nullable: boolean;
}

/**
 * `b` merged into `a`, which is changed in place and returned: every shape here is built by
 * shapeOf for this inference alone, and copying `a` at each merge made a list of n objects cost n².
 */
function merge(a: Shape | null, b: Shape): Shape {
  if (!a) return b;
  if (a.kind === 'record' && (b.kind === 'object' || b.kind === 'record')) return a;
  if (b.kind === 'record' && a.kind === 'object') return b;
  if (a.kind !== b.kind) {
    // integer vs other numbers is one kind; anything else mixed is unknown.
    return { kind: 'unknown' };
  }
  if (a.kind === 'string' && b.kind === 'string') {
    for (const v of b.values) {
      if (a.values.size >= MAX_STRING_VALUES) break;
      a.values.add(v);
    }
    return a;
  }
  if (a.kind === 'number' && b.kind === 'number') {
    a.integer &&= b.integer;
    return a;
  }
  if (a.kind === 'array' && b.kind === 'array') {
    if (b.items) a.items = merge(a.items, b.items);
    return a;
  }
  if (a.kind === 'object' && b.kind === 'object') {
    for (const [k, v] of b.props) {
      const cur = a.props.get(k);
      if (!cur) {
        if (a.props.size >= DRAFT_MAX_PROPS) return { kind: 'record' };
        a.props.set(k, v);
        continue;
      }
      if (v.shape) cur.shape = merge(cur.shape, v.shape);
      cur.seen += v.seen;
      cur.nullable ||= v.nullable;
    }
    a.samples += b.samples;
    return a;
  }
  return a;
}

function shapeOf(v: unknown): Shape | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return { kind: 'string', values: new Set([v]) };
  if (typeof v === 'number') return { kind: 'number', integer: Number.isInteger(v) };
  if (typeof v === 'boolean') return { kind: 'boolean' };
  if (Array.isArray(v)) return { kind: 'array', items: v.length ? infer(v).shape : null };
  if (typeof v === 'object') {
    const entries = Object.entries(v);
    if (entries.length > DRAFT_MAX_PROPS) return { kind: 'record' };
    const props = new Map<string, Prop>();
    for (const [k, x] of entries) props.set(k, { shape: shapeOf(x), seen: 1, nullable: x === null });
    return { kind: 'object', props, samples: 1 };
  }
  return { kind: 'unknown' };
}

export function infer(samples: unknown[]): Inferred {
  let shape: Shape | null = null;
  let nullable = false;
  for (const s of samples) {
    const sh = shapeOf(s);
    if (!sh) nullable = true;
    else shape = merge(shape, sh);
  }
  return { shape: shape ?? { kind: 'unknown' }, nullable };
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** A recorded name as an object literal's key (`__proto__: x` would set the prototype, not a field). */
const key = (k: string) => (k === '__proto__' ? '["__proto__"]' : IDENT.test(k) ? k : JSON.stringify(k));

/** valibot code for a shape; `mode` input: strict objects and enums; output: loose objects. */
export function toValibot(s: Shape, mode: 'input' | 'output', samples = 0, indent = ''): string {
  switch (s.kind) {
    case 'string': {
      const values = [...s.values];
      if (mode === 'input' && samples >= 3 && values.length >= 2 && values.length <= 3 && values.every((x) => x.length > 0 && x.length < 30 && /^[\w-]+$/.test(x))) {
        return `v.picklist(${JSON.stringify(values.sort())})`;
      }
      return 'v.string()';
    }
    case 'number':
      return s.integer ? 'v.pipe(v.number(), v.integer())' : 'v.number()';
    case 'boolean':
      return 'v.boolean()';
    case 'array':
      return `v.array(${s.items ? toValibot(s.items, mode, 0, indent) : 'v.unknown()'})`;
    case 'record':
      return 'v.record(v.string(), v.unknown())';
    case 'object': {
      if (s.props.size === 0) return mode === 'input' ? 'v.object({})' : 'v.looseObject({})';
      const inner = indent + '  ';
      const lines = [...s.props].map(([k, p]) => {
        const base = p.shape ? toValibot(p.shape, mode, p.seen, inner) : 'v.unknown()';
        const code = p.nullable && p.shape ? `v.nullable(${base})` : base;
        return `${inner}${key(k)}: ${p.seen < s.samples ? `v.optional(${code})` : code},`;
      });
      return `${mode === 'input' ? 'v.object' : 'v.looseObject'}({\n${lines.join('\n')}\n${indent}})`;
    }
    default:
      return 'v.unknown()';
  }
}

export function inferredCode(i: Inferred, mode: 'input' | 'output', samples: number, indent = ''): string {
  const code = toValibot(i.shape, mode, samples, indent);
  return i.nullable ? `v.nullable(${code})` : code;
}
